/**
 * The durable queue of one backend: requests accepted to disk (one checked file each, fsynced)
 * and delivered in the background, in order (`fifo`) or `parallel`, with exponential backoff and
 * jitter, `Retry-After` honoured, until they are delivered or go to the dead letters (a refusal
 * that retrying cannot change, or past `max_attempts` / `max_age_secs`). Files: `tmp/` (being
 * written; removed at start), `ready/<id>.msg` (+ `<id>.state`: attempts so far), `dead/<id>.msg`
 * (+ `<id>.json`: why, and the answer).
 */
import { join } from "node:path";
import type { QueueConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import {
  Body,
  type RequestEnvelope,
  RequestEnvelope as Envelope,
  type ResponseEnvelope,
} from "../envelope.ts";
import { GatewayError, toGatewayError } from "../errors.ts";
import { bodyStream, type MessageHeader, readMessage, writeMessage } from "./message_file.ts";
import { type Verdict, verdictOf } from "./verdict.ts";

/** Request headers never written to disk: credentials (the backend's own apply at delivery). */
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

/** Counters and gauges of one queue (management API, metrics, status reports). */
export interface QueueStats {
  backend: string;
  dir: string;
  /** Messages waiting (not dead). */
  depth: number;
  bytes: number;
  in_flight: number;
  /** Waiting after at least one failed attempt. */
  retrying: number;
  dead: number;
  /** Age of the oldest waiting message, seconds (0: none). */
  oldest_age_secs: number;
  delivered_total: number;
  retried_total: number;
  dead_lettered_total: number;
}

/** What the queue reports to. */
export interface QueueDeps {
  logger: Logger;
  /** Delivers a rebuilt request through the backend; resolves with its answer or throws. */
  deliver(req: RequestEnvelope, signal: AbortSignal): Promise<ResponseEnvelope>;
  /** Time allowed for one delivery attempt, ms. */
  attemptTimeoutMs: number;
  /** Called after every change of the counters. */
  changed?(stats: QueueStats): void;
}

interface Pending {
  id: string;
  size: number;
  accepted_at: number;
  attempts: number;
  next_at: number;
  last_error?: string;
  inFlight: boolean;
}

let sequence = 0;

/** A sortable unique id: time, then a counter, then randomness. */
function newId(now: number): string {
  sequence = (sequence + 1) % 1_000_000;
  const random = crypto.getRandomValues(new Uint8Array(4));
  return `${now.toString().padStart(13, "0")}-${String(sequence).padStart(6, "0")}-${
    Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

/** One backend's queue. */
export class DeliveryQueue {
  readonly backend: string;
  readonly dir: string;
  #config: QueueConfig;
  #deps: QueueDeps;
  readonly #pending: Pending[] = [];
  #bytes = 0;
  #dead = 0;
  #deadBytes = 0;
  #inFlight = 0;
  #delivered = 0;
  #retried = 0;
  #deadLettered = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #attempts = new Set<Promise<void>>();
  readonly #controller = new AbortController();

  private constructor(backend: string, dir: string, config: QueueConfig, deps: QueueDeps) {
    this.backend = backend;
    this.dir = dir;
    this.#config = config;
    this.#deps = deps;
  }

  /** Opens (creating) the queue directory, removes half-written files, resumes what waits. */
  static async open(
    backend: string,
    dir: string,
    config: QueueConfig,
    deps: QueueDeps,
  ): Promise<DeliveryQueue> {
    const q = new DeliveryQueue(backend, dir, config, deps);
    for (const sub of ["tmp", "ready", "dead"]) {
      await Deno.mkdir(join(dir, sub), { recursive: true, mode: 0o700 });
    }
    for await (const e of Deno.readDir(join(dir, "tmp"))) {
      await Deno.remove(join(dir, "tmp", e.name)).catch(() => {});
    }
    const names: string[] = [];
    for await (const e of Deno.readDir(join(dir, "ready"))) {
      if (e.name.endsWith(".msg")) names.push(e.name.slice(0, -4));
    }
    names.sort();
    for (const id of names) {
      const path = join(dir, "ready", `${id}.msg`);
      const size = (await Deno.stat(path)).size;
      let state: { attempts?: number; last_error?: string } = {};
      try {
        state = JSON.parse(await Deno.readTextFile(join(dir, "ready", `${id}.state`)));
      } catch {
        // no attempt yet, or its note was lost with a crash: counted from 0
      }
      q.#pending.push({
        id,
        size,
        accepted_at: Number(id.slice(0, 13)),
        attempts: state.attempts ?? 0,
        next_at: 0,
        last_error: state.last_error,
        inFlight: false,
      });
      q.#bytes += size;
    }
    for await (const e of Deno.readDir(join(dir, "dead"))) {
      if (!e.name.endsWith(".msg")) continue;
      q.#dead++;
      q.#deadBytes += (await Deno.stat(join(dir, "dead", e.name))).size;
    }
    if (q.#pending.length) {
      deps.logger.info("queue resumed", {
        backend,
        waiting: q.#pending.length,
        dead: q.#dead,
      });
    }
    q.#pump();
    return q;
  }

  /** New settings (a reload); the directory stays. */
  retune(config: QueueConfig, deps: QueueDeps): void {
    this.#config = config;
    this.#deps = deps;
    this.#pump();
  }

  /** A refusal of a full queue, with Retry-After. */
  static #full(status: 503 | 507, message: string): GatewayError {
    const err = new GatewayError(status, "queue_full", message);
    err.headers = { "retry-after": "30" };
    return err;
  }

  /** Why a new message cannot be taken now (503/507), or undefined. */
  #refusal(declared: number | null): GatewayError | undefined {
    const count = this.#pending.length + this.#dead;
    if (count >= this.#config.max_messages) {
      return DeliveryQueue.#full(
        503,
        `the delivery queue of backend ${this.backend} holds ${count} messages (max_messages)`,
      );
    }
    if (this.#bytes + this.#deadBytes + (declared ?? 0) > this.#config.max_bytes) {
      return DeliveryQueue.#full(
        507,
        `the delivery queue of backend ${this.backend} is at max_bytes`,
      );
    }
    return undefined;
  }

  /** Persists `req` (flushed before this resolves, with `fsync`) and returns its delivery id. */
  async accept(req: RequestEnvelope): Promise<string> {
    if (this.#closed) throw new GatewayError(503, "queue_closed", "the gateway is stopping");
    const refused = this.#refusal(req.body.knownLength);
    if (refused) throw refused;
    const now = Date.now();
    const id = newId(now);
    const headers: [string, string][] = [];
    req.readHeaders.forEach((value, name) => {
      if (!NOT_STORED.has(name)) headers.push([name, value]);
    });
    const header: MessageHeader = {
      id,
      backend: this.backend,
      pipeline: req.pipeline,
      endpoint: req.endpoint,
      protocol: req.protocol,
      accepted_at: now,
      method: req.method,
      path: req.path,
      query: req.queryString(),
      headers,
      metadata: { ...req.metadata },
      content_type: req.body.contentType,
    };
    const room = this.#config.max_bytes - this.#bytes - this.#deadBytes;
    let size: number;
    try {
      size = await writeMessage(
        join(this.dir, "tmp"),
        join(this.dir, "ready"),
        header,
        req.body.forwardable(),
        { fsync: this.#config.fsync, limit: room },
      );
    } catch (err) {
      const e = err as Error & { noSpace?: boolean };
      if (e.noSpace || /over \d+ bytes/.test(e.message)) {
        throw DeliveryQueue.#full(
          507,
          `the delivery queue of backend ${this.backend} has no room: ${e.message}`,
        );
      }
      throw toGatewayError(err);
    }
    this.#pending.push({ id, size, accepted_at: now, attempts: 0, next_at: 0, inFlight: false });
    this.#bytes += size;
    this.#changed();
    this.#pump();
    return id;
  }

  /** Starts the attempts that may run now; arms a timer for the next one due. */
  #pump(): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const limit = this.#config.ordering === "fifo" ? 1 : this.#config.concurrency;
    const now = Date.now();
    let nextDue = Infinity;
    for (const p of this.#pending) {
      if (this.#inFlight >= limit) break;
      if (p.inFlight) {
        if (this.#config.ordering === "fifo") break;
        continue;
      }
      if (p.next_at > now) {
        nextDue = Math.min(nextDue, p.next_at);
        // In order: nothing behind a head that waits goes first.
        if (this.#config.ordering === "fifo") break;
        continue;
      }
      p.inFlight = true;
      this.#inFlight++;
      const attempt = this.#attempt(p).finally(() => {
        this.#attempts.delete(attempt);
        p.inFlight = false;
        this.#inFlight--;
        this.#changed();
        this.#pump();
      });
      this.#attempts.add(attempt);
      if (this.#config.ordering === "fifo") break;
    }
    if (nextDue !== Infinity && this.#inFlight < limit) {
      const timer = setTimeout(() => this.#pump(), Math.max(0, nextDue - now));
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  async #attempt(p: Pending): Promise<void> {
    const path = join(this.dir, "ready", `${p.id}.msg`);
    let verdict: Verdict;
    let answer: { status?: number; body?: string } = {};
    try {
      const stored = await readMessage(path);
      const h = stored.header;
      const headers = new Headers(h.headers);
      headers.set("idempotency-key", h.id);
      let body = stored.bodyLength > 0
        ? new Body(bodyStream(path, stored), h.content_type, undefined, stored.bodyLength)
        : Body.empty();
      if (this.#config.fhir_conditional_create && isFhirCreate(h.method, h.path)) {
        const bytes = stored.bodyLength <= MAX_CONDITIONAL_BODY
          ? await new Body(bodyStream(path, stored), h.content_type).bytes()
          : undefined;
        const condition = bytes && ifNoneExist(bytes);
        if (condition) headers.set("if-none-exist", condition);
        if (bytes) body = new Body(bytes, h.content_type);
      }
      const req = new Envelope({
        id: h.id,
        protocol: h.protocol as RequestEnvelope["protocol"],
        method: h.method,
        path: h.path,
        rawQuery: h.query,
        headers,
        metadata: { ...h.metadata, delivery_id: h.id },
        body,
        endpoint: h.endpoint,
      });
      req.pipeline = h.pipeline;
      const signal = AbortSignal.any([
        this.#controller.signal,
        AbortSignal.timeout(this.#deps.attemptTimeoutMs),
      ]);
      try {
        const res = await this.#deps.deliver(req, signal);
        verdict = verdictOf(res);
        answer = { status: res.status, body: await bodyText(res) };
      } catch (err) {
        const g = toGatewayError(err);
        verdict = g.status >= 500 || g.status === 408 || g.status === 429
          ? { kind: "retry", reason: `${g.code}: ${g.message}` }
          : { kind: "dead", reason: `${g.code}: ${g.message}` };
        answer = { status: g.status, body: g.message };
      }
    } catch (err) {
      // A damaged file cannot be delivered; it is kept for a person to look at.
      verdict = { kind: "dead", reason: (err as Error).message };
    }
    if (this.#closed && verdict.kind === "retry") return;
    if (verdict.kind === "delivered") {
      await Deno.remove(path).catch(() => {});
      await Deno.remove(join(this.dir, "ready", `${p.id}.state`)).catch(() => {});
      this.#remove(p);
      this.#delivered++;
      return;
    }
    p.attempts++;
    p.last_error = verdict.reason;
    const age = Date.now() - p.accepted_at;
    const exhausted = (this.#config.max_attempts > 0 && p.attempts >= this.#config.max_attempts) ||
      age >= this.#config.max_age_secs * 1000;
    if (verdict.kind === "dead" || exhausted) {
      await this.#toDead(
        p,
        verdict.kind === "dead" ? verdict.reason : `gave up: ${verdict.reason}`,
        answer,
      );
      return;
    }
    this.#retried++;
    const backoff = Math.min(
      this.#config.max_backoff_ms,
      this.#config.initial_backoff_ms * 2 ** Math.min(p.attempts - 1, 30),
    );
    // Full jitter between half and all of it, or the server's Retry-After when later.
    const wait = Math.max(backoff / 2 + Math.random() * backoff / 2, verdict.retryAfterMs ?? 0);
    p.next_at = Date.now() + wait;
    await Deno.writeTextFile(
      join(this.dir, "ready", `${p.id}.state`),
      JSON.stringify({ attempts: p.attempts, last_error: p.last_error }),
    ).catch(() => {});
    this.#deps.logger.warn("delivery failed; will retry", {
      backend: this.backend,
      delivery_id: p.id,
      attempt: p.attempts,
      retry_in_ms: Math.round(wait),
      reason: verdict.reason,
    });
  }

  async #toDead(p: Pending, reason: string, answer: { status?: number; body?: string }) {
    const from = join(this.dir, "ready", `${p.id}.msg`);
    const to = join(this.dir, "dead", `${p.id}.msg`);
    await Deno.writeTextFile(
      join(this.dir, "dead", `${p.id}.json`),
      JSON.stringify({
        reason,
        attempts: p.attempts,
        dead_at: new Date().toISOString(),
        status: answer.status,
        answer: answer.body?.slice(0, 4096),
      }),
    );
    await Deno.rename(from, to);
    await Deno.remove(join(this.dir, "ready", `${p.id}.state`)).catch(() => {});
    this.#remove(p);
    this.#dead++;
    this.#deadBytes += p.size;
    this.#deadLettered++;
    this.#deps.logger.error("delivery given up: moved to the dead letters", {
      backend: this.backend,
      delivery_id: p.id,
      attempts: p.attempts,
      reason,
    });
  }

  #remove(p: Pending): void {
    const i = this.#pending.indexOf(p);
    if (i >= 0) this.#pending.splice(i, 1);
    this.#bytes -= p.size;
  }

  #changed(): void {
    this.#deps.changed?.(this.stats());
  }

  /** Counters now. */
  stats(): QueueStats {
    const oldest = this.#pending[0]?.accepted_at;
    return {
      backend: this.backend,
      dir: this.dir,
      depth: this.#pending.length,
      bytes: this.#bytes,
      in_flight: this.#inFlight,
      retrying: this.#pending.filter((p) => p.attempts > 0).length,
      dead: this.#dead,
      oldest_age_secs: oldest ? Math.max(0, (Date.now() - oldest) / 1000) : 0,
      delivered_total: this.#delivered,
      retried_total: this.#retried,
      dead_lettered_total: this.#deadLettered,
    };
  }

  /** Metadata of waiting (`ready`) or dead messages; never their bodies. */
  async list(state: "ready" | "dead", limit = 100): Promise<Record<string, unknown>[]> {
    const names: string[] = [];
    for await (const e of Deno.readDir(join(this.dir, state))) {
      if (e.name.endsWith(".msg")) names.push(e.name.slice(0, -4));
    }
    names.sort();
    const out: Record<string, unknown>[] = [];
    for (const id of names.slice(0, limit)) out.push(await this.inspect(id, state));
    return out;
  }

  /** One message's metadata (what it was, attempts, why it is dead); never its body. */
  async inspect(id: string, state?: "ready" | "dead"): Promise<Record<string, unknown>> {
    checkId(id);
    const where = state ?? (await exists(join(this.dir, "ready", `${id}.msg`)) ? "ready" : "dead");
    const path = join(this.dir, where, `${id}.msg`);
    if (!(await exists(path))) {
      throw new GatewayError(404, "not_found", `no message ${id} in the queue of ${this.backend}`);
    }
    const stored = await readMessage(path).catch((err) => ({ error: (err as Error).message }));
    if ("error" in stored) return { id, state: where, error: stored.error };
    const h = stored.header;
    const pending = this.#pending.find((p) => p.id === id);
    let dead: Record<string, unknown> | undefined;
    if (where === "dead") {
      dead = JSON.parse(
        await Deno.readTextFile(join(this.dir, "dead", `${id}.json`)).catch(() => "{}"),
      );
    }
    return {
      id,
      state: where,
      accepted_at: new Date(h.accepted_at).toISOString(),
      pipeline: h.pipeline,
      endpoint: h.endpoint,
      method: h.method,
      path: h.path,
      body_bytes: stored.bodyLength,
      content_type: h.content_type,
      attempts: pending?.attempts ?? dead?.attempts ?? 0,
      last_error: pending?.last_error ?? dead?.reason,
      ...(dead ? { dead: dead } : {}),
    };
  }

  /** Puts dead letters (one, or all) back in the queue; returns how many. */
  async retryDead(id?: string): Promise<number> {
    const ids: string[] = [];
    if (id) {
      // The id becomes a file name: nothing but a delivery id may reach the file system.
      checkId(id);
      ids.push(id);
    } else {
      for await (const e of Deno.readDir(join(this.dir, "dead"))) {
        if (e.name.endsWith(".msg")) ids.push(e.name.slice(0, -4));
      }
    }
    let moved = 0;
    for (const i of ids.sort()) {
      const from = join(this.dir, "dead", `${i}.msg`);
      if (!(await exists(from))) {
        if (id) throw new GatewayError(404, "not_found", `no dead letter ${i} for ${this.backend}`);
        continue;
      }
      const size = (await Deno.stat(from)).size;
      await Deno.rename(from, join(this.dir, "ready", `${i}.msg`));
      await Deno.remove(join(this.dir, "dead", `${i}.json`)).catch(() => {});
      this.#dead--;
      this.#deadBytes -= size;
      const entry: Pending = {
        id: i,
        size,
        accepted_at: Number(i.slice(0, 13)),
        attempts: 0,
        next_at: 0,
        inFlight: false,
      };
      const at = this.#pending.findIndex((p) => p.id > i);
      if (at < 0) this.#pending.push(entry);
      else this.#pending.splice(at, 0, entry);
      this.#bytes += size;
      moved++;
    }
    this.#changed();
    this.#pump();
    return moved;
  }

  /** Deletes every dead letter; returns how many. */
  async purgeDead(): Promise<number> {
    let removed = 0;
    for await (const e of Deno.readDir(join(this.dir, "dead"))) {
      await Deno.remove(join(this.dir, "dead", e.name)).catch(() => {});
      if (e.name.endsWith(".msg")) removed++;
    }
    this.#dead = 0;
    this.#deadBytes = 0;
    this.#changed();
    return removed;
  }

  /** Stops delivering: running attempts are aborted (they will be retried after a restart). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#controller.abort(new DOMException("the queue is closing", "AbortError"));
    await Promise.allSettled([...this.#attempts]);
  }
}

/** A delivery id as newId makes them (time, counter, random hex); anything else is refused. */
const DELIVERY_ID = /^\d{13}-\d{6}-[0-9a-f]{8}$/;

function checkId(id: string): void {
  if (!DELIVERY_ID.test(id)) throw new GatewayError(400, "invalid_id", "not a delivery id");
}

/** Largest create body read to find its identifier. */
const MAX_CONDITIONAL_BODY = 1024 * 1024;

/** A FHIR create: POST to a resource type. */
function isFhirCreate(method: string, path: string): boolean {
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

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Up to 4 KiB of an answer's body as text (kept with a dead letter). */
async function bodyText(res: ResponseEnvelope): Promise<string> {
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
