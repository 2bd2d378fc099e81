/**
 * What every queue store does the same around one delivery attempt: the delivery id, the request
 * headers kept with a message, the FHIR conditional create of a redelivered create, the verdict of
 * a failure thrown, the back-off before the next attempt, and the start of the answer kept with a
 * dead letter.
 */
import type { QueueConfig } from "../../shared/gateway_config/mod.ts";
import { type Body, RequestEnvelope, type ResponseEnvelope } from "../envelope.ts";
import { GatewayError, toGatewayError } from "../errors.ts";
import type { Verdict } from "./verdict.ts";
import type { MessageHeader } from "./message_file.ts";

/** Request headers never stored with a message: credentials (the backend's own apply at delivery). */
const NOT_STORED = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
]);

/** The headers of `req` a queue keeps (credentials and hop-by-hop headers left out). */
export function storedHeaders(req: RequestEnvelope): [string, string][] {
  const headers: [string, string][] = [];
  req.readHeaders.forEach((value, name) => {
    if (!NOT_STORED.has(name)) headers.push([name, value]);
  });
  return headers;
}

let sequence = 0;

/** A sortable unique delivery id: time, then a counter, then randomness. */
export function newId(now: number): string {
  sequence = (sequence + 1) % 1_000_000;
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `${now.toString().padStart(13, "0")}-${String(sequence).padStart(6, "0")}-${
    Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

/** A delivery id as newId makes them (time, counter, random hex); anything else is refused. */
const DELIVERY_ID = /^\d{13}-\d{6}-[0-9a-f]{8}$/;

/** Throws 400 `invalid_id` unless `id` is a delivery id (it becomes a file name or a subject). */
export function checkId(id: string): void {
  if (!DELIVERY_ID.test(id)) throw new GatewayError(400, "invalid_id", "not a delivery id");
}

/** Largest create body read to find its identifier. */
export const MAX_CONDITIONAL_BODY = 1024 * 1024;

/** A FHIR create: POST to a resource type. */
export function isFhirCreate(method: string, path: string): boolean {
  return method === "POST" && /^\/[A-Z][A-Za-z]{0,63}\/?$/.test(path);
}

/** Escapes a FHIR search token part (`\`, `|`, `,`, `$`). */
function tokenPart(text: string): string {
  return text.replace(/[\\|,$]/g, (c) => `\\${c}`);
}

/**
 * `identifier=<system>|<value>` (URL-encoded) of a JSON resource's first identifier with both, or
 * undefined (no identifier, not JSON: the create is sent without a condition).
 */
export function ifNoneExist(bytes: Uint8Array): string | undefined {
  let resource: { identifier?: { system?: unknown; value?: unknown }[] };
  try {
    resource = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
  const id = Array.isArray(resource?.identifier)
    ? resource.identifier.find((i) => typeof i?.system === "string" && typeof i?.value === "string")
    : undefined;
  if (!id) return undefined;
  return new URLSearchParams({
    identifier: `${tokenPart(id.system as string)}|${tokenPart(id.value as string)}`,
  }).toString();
}

/** The verdict on an attempt that threw: worth retrying (5xx, 408, 429) or dead, and the answer. */
export function thrownVerdict(
  err: unknown,
): { verdict: Verdict; answer: { status?: number; body?: string } } {
  const g = toGatewayError(err);
  const verdict: Verdict = g.status >= 500 || g.status === 408 || g.status === 429
    ? { kind: "retry", reason: `${g.code}: ${g.message}` }
    : { kind: "dead", reason: `${g.code}: ${g.message}` };
  return { verdict, answer: { status: g.status, body: g.message } };
}

/**
 * Wait before the next attempt after `attempts` failed ones: `initial_backoff_ms` doubling up to
 * `max_backoff_ms`, drawn between half and all of it, or the server's Retry-After when later.
 */
export function backoffMs(config: QueueConfig, attempts: number, retryAfterMs?: number): number {
  const backoff = Math.min(
    config.max_backoff_ms,
    config.initial_backoff_ms * 2 ** Math.min(Math.max(0, attempts - 1), 30),
  );
  return Math.max(backoff / 2 + Math.random() * backoff / 2, retryAfterMs ?? 0);
}

/** Up to 4 KiB of an answer's body as text (kept with a dead letter). */
export async function bodyText(res: ResponseEnvelope): Promise<string> {
  try {
    const source = res.body.forwardable();
    if (source instanceof Uint8Array) return new TextDecoder().decode(source.subarray(0, 4096));
    if (!source) return "";
    const reader = source.getReader();
    const parts: Uint8Array[] = [];
    let size = 0;
    while (size < 4096) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
    }
    await reader.cancel().catch(() => {});
    const all = new Uint8Array(size);
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return new TextDecoder().decode(all.subarray(0, 4096));
  } catch {
    return "";
  }
}

/** Headers that describe a body's bytes: left out when an operator edits the body. */
const BODY_HEADERS =
  /^(content-type|content-encoding|content-md5|digest|content-digest|repr-digest)$/i;

/**
 * The header of a dead letter sent again as message `id` (accepted `now`): the same request, with
 * the edited body's content type; headers that described the old bytes are left out when the body
 * is edited.
 */
export function resentHeader<H extends MessageHeader>(
  old: H,
  id: string,
  now: number,
  edit: { body?: Uint8Array; content_type?: string },
): MessageHeader {
  const contentType = edit.content_type ?? old.content_type;
  const edited = edit.body !== undefined || edit.content_type !== undefined;
  const headers = edited ? old.headers.filter(([k]) => !BODY_HEADERS.test(k)) : old.headers;
  if (edited && contentType) headers.push(["content-type", contentType]);
  return {
    id,
    backend: old.backend,
    pipeline: old.pipeline,
    endpoint: old.endpoint,
    protocol: old.protocol,
    accepted_at: now,
    method: old.method,
    path: old.path,
    query: old.query,
    headers: edited ? headers : [...headers],
    metadata: { ...old.metadata },
    content_type: contentType,
  };
}

/** The 409 of a dead letter whose stored form cannot be read back. */
export function unreadableDeadLetter(id: string, err: unknown): GatewayError {
  return new GatewayError(
    409,
    "dead_letter_unreadable",
    `dead letter ${id} cannot be read back: ${(err as Error)?.message ?? err}`,
  );
}

/**
 * The request a stored message stands for, as its backend gets it on each attempt: the stored
 * method, path, query, headers (`headers`, with what the attempt adds) and metadata, the delivery
 * id in the metadata, and the pipeline it came through.
 */
export function storedRequest(
  header: MessageHeader,
  headers: Headers,
  body: Body,
): RequestEnvelope {
  const req = new RequestEnvelope({
    id: header.id,
    protocol: header.protocol as RequestEnvelope["protocol"],
    method: header.method,
    path: header.path,
    rawQuery: header.query,
    headers,
    metadata: { ...header.metadata, delivery_id: header.id },
    body,
    endpoint: header.endpoint,
  });
  req.pipeline = header.pipeline;
  return req;
}
