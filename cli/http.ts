/**
 * HTTP for gwcli: JSON requests with a timeout, diagnostics at `-v` (request line, status,
 * time), `-vv` (headers, `authorization` hidden) and `-vvv` (bodies, token fields hidden), and
 * failures to connect turned into one readable error.
 */
import { CliError } from "./errors.ts";
import type { Output } from "./output.ts";

/** Default time limit of one request. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** A request. */
export interface HttpRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  /** Sent as `application/json`. */
  json?: unknown;
  /** Sent as `application/x-www-form-urlencoded`. */
  form?: Record<string, string>;
  /** Who answers, for error messages ("the cloud service", "gateway 'edge'"). */
  peer: string;
  timeoutMs?: number;
}

/** An answer with its body read. */
export interface HttpResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

/** The `fetch` gwcli uses (tests may pass another). */
export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const SECRET_KEY = /token|secret|password|authorization|device_code/i;

/** `value` with every field named like a secret replaced by `[redacted]` (for `-vvv`). */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map((
        [k, v],
      ) => [k, SECRET_KEY.test(k) && typeof v === "string" ? "[redacted]" : redact(v)]),
    );
  }
  return value;
}

function describeBody(text: string): string {
  try {
    return JSON.stringify(redact(JSON.parse(text)));
  } catch {
    return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
  }
}

function describeHeaders(headers: Headers | Record<string, string>): string {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  return entries.map(([k, v]) => `${k}: ${SECRET_KEY.test(k) ? "[redacted]" : v}`).join(", ");
}

/** Why a fetch failed, in a few words. */
export function networkReason(err: unknown): string {
  const e = err as Error & { cause?: unknown };
  if (e?.name === "TimeoutError") return "timed out";
  const text = `${e?.message ?? err} ${(e?.cause as Error | undefined)?.message ?? ""}`;
  if (/refused/i.test(text)) return "connection refused";
  if (/dns|lookup|name or service|not known|resolve/i.test(text)) return "unknown host";
  if (/certificate|tls|ssl/i.test(text)) return `TLS error (${e.message})`;
  return e?.message ?? String(err);
}

/** `200 OK` (or only `200` when the answer has no reason phrase). */
export function statusLine(response: Response): string {
  return response.statusText
    ? `${response.status} ${response.statusText}`
    : String(response.status);
}

/** Makes requests and logs them on the output's diagnostic levels. */
export class HttpClient {
  #out: Output;
  #fetch: FetchFn;

  constructor(out: Output, fetchFn: FetchFn = fetch) {
    this.#out = out;
    this.#fetch = fetchFn;
  }

  /** Sends `req` and reads the whole answer; throws a {@link CliError} when unreachable. */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const headers: Record<string, string> = { accept: "application/json", ...req.headers };
    let body: string | undefined;
    if (req.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(req.json);
    } else if (req.form !== undefined) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(req.form).toString();
    }
    const out = this.#out;
    out.debug(1, `${req.method} ${req.url}`);
    out.debug(2, `request headers: ${describeHeaders(headers)}`);
    if (body !== undefined) out.debug(3, `request body: ${describeBody(body)}`);
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(req.url, {
        method: req.method,
        headers,
        body,
        signal: AbortSignal.timeout(req.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (err) {
      out.debug(1, `${req.method} ${req.url} failed: ${(err as Error).message}`);
      throw new CliError(`cannot reach ${req.peer} at ${req.url}: ${networkReason(err)}`, {
        cause: err,
      });
    }
    const ms = (performance.now() - started).toFixed(0);
    out.debug(1, `${statusLine(response)} in ${ms} ms`);
    out.debug(2, `response headers: ${describeHeaders(response.headers)}`);
    if (text) out.debug(3, `response body: ${describeBody(text)}`);
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }
}

/** An error answer in the API shape `{"error":{"code","message","request_id"}}` or OAuth's. */
export interface ApiErrorBody {
  code: string;
  message: string;
  requestId?: string;
}

/** Reads the error of an answer: the API shape, the OAuth shape, or the status line. */
export function apiErrorOf(res: HttpResponse): ApiErrorBody {
  const b = res.body as Record<string, unknown> | undefined;
  const e = b?.error;
  if (typeof e === "object" && e !== null) {
    const o = e as Record<string, unknown>;
    return {
      code: typeof o.code === "string" ? o.code : `http_${res.status}`,
      message: typeof o.message === "string" ? o.message : res.text,
      requestId: typeof o.request_id === "string" ? o.request_id : undefined,
    };
  }
  if (typeof e === "string") {
    const d = b?.error_description;
    return { code: e, message: typeof d === "string" ? d : e };
  }
  const snippet = res.text.trim().slice(0, 200);
  return { code: `http_${res.status}`, message: snippet || `HTTP ${res.status}` };
}

/** `message (code, request id …)` for error lines. */
export function describeApiError(err: ApiErrorBody): string {
  const id = err.requestId ? `, request id ${err.requestId}` : "";
  return `${err.message} (${err.code}${id})`;
}

/** The body of a 2xx answer as a JSON object, or a {@link CliError}. */
export function jsonObject(res: HttpResponse, what: string): Record<string, unknown> {
  if (typeof res.body !== "object" || res.body === null || Array.isArray(res.body)) {
    throw new CliError(`${what} answered ${res.status} without a JSON object`);
  }
  return res.body as Record<string, unknown>;
}
