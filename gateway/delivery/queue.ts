/**
 * The durable queue of one backend: requests accepted to disk (one checked file each, fsynced)
 * and delivered in the background, in order (`fifo`) or `parallel`, with exponential backoff and
 * jitter, `Retry-After` honoured, until they are delivered or go to the dead letters (a refusal
 * that retrying cannot change, or past `max_attempts` / `max_age_secs`). Files: `tmp/` (being
 * written; removed at start), `ready/<id>.msg` (+ `<id>.state`: attempts so far), `dead/<id>.msg`
 * (+ `<id>.json`: why, and the answer).
 *
 * A write in the background that the disk refuses (a dead letter, a `.state` note, reading the
 * directory at start) pauses the queue instead of failing the process: new messages get 507
 * `queue_full`, the owed writes wait, deliveries that only free space go on, and a probe with
 * backoff resumes the queue by itself once the disk takes writes again (docs/delivery.md).
 */
import { join } from "node:path";
import { type Clock, systemClock, timeoutSignal, type TimerHandle } from "../../shared/mod.ts";
import type { QueueConfig } from "../../shared/gateway_config/mod.ts";
import { Body, type RequestEnvelope } from "../envelope.ts";
import { GatewayError, toGatewayError } from "../errors.ts";
import { describeDiskError, diskErrorCode, replaceFile } from "../disk/mod.ts";
import { boundedClientBody } from "../body_read.ts";
import {
  bodyStream,
  type MessageHeader,
  readMessage,
  readSmallMessage,
  type SmallMessage,
  writeMessage,
} from "./message_file.ts";
import { type Verdict, verdictOf } from "./verdict.ts";
import type {
  DeadLetterContent,
  DeadLetterEdit,
  QueueDeps,
  QueueStats,
  QueueStore,
} from "./queue_store.ts";
import {
  backoffMs,
  bodyText,
  checkId,
  ifNoneExist,
  isFhirCreate,
  MAX_CONDITIONAL_BODY,
  newId,
  resentHeader,
  storedHeaders,
  storedRequest,
  thrownVerdict,
  unreadableDeadLetter,
} from "./attempt.ts";

export type { QueueDeps, QueueStats } from "./queue_store.ts";
export { ifNoneExist } from "./attempt.ts";

/** Why a message is dead, kept until its dead letter is on disk. */
interface DeadLetter {
  reason: string;
  answer: { status?: number; body?: string };
  dead_at: string;
}

interface Pending {
  id: string;
  size: number;
  accepted_at: number;
  attempts: number;
  next_at: number;
  last_error?: string;
  inFlight: boolean;
  /** Refused for good, but its dead letter could not be written yet: never sent again. */
  deadLetter?: DeadLetter;
  /** Its `.state` note could not be written: written again when the disk takes writes. */
  stateOwed?: boolean;
}

/** Longest wait between two probes of a disk that refuses writes. */
const MAX_PROBE_MS = 30_000;
/** The name of the probe's file in the queue directory. */
const PROBE = ".queue-probe";
/** Messages up to this size are read whole for their delivery; larger ones are streamed. */
const WHOLE_READ_BYTES = 16 << 20;

/** One backend's queue. */
export class DeliveryQueue implements QueueStore {
  readonly backend: string;
  readonly dir: string;
  #config: QueueConfig;
  #deps: QueueDeps;
  readonly #pending: Pending[] = [];
  /** The next message's file being read ahead (`fifo`: while the one before is delivered). */
  #ahead:
    | { id: string; read: Promise<SmallMessage | undefined>; buffer?: Uint8Array<ArrayBuffer> }
    | undefined;
  /** The read ahead of the next message, waiting for the request before it to go out. */
  #readNextTimer: ReturnType<typeof setTimeout> | undefined;
  /** Memory messages were read into, free for the next (two: one delivered, one read ahead). */
  readonly #spares: Uint8Array<ArrayBuffer>[] = [];
  #bytes = 0;
  #dead = 0;
  #deadBytes = 0;
  #inFlight = 0;
  #delivered = 0;
  #retried = 0;
  #deadLettered = 0;
  #timer: TimerHandle | undefined;
  #closed = false;
  /** Dead letters being sent again (a second resend or a retry of one waits its turn: 409). */
  readonly #resending = new Set<string>();
  /** False until the directory has been read (a disk error at start defers it to the probe). */
  #scanned = false;
  /** Set while the disk refuses the queue's writes (the queue is paused). */
  #degraded: { reason: string; since: number } | undefined;
  #probeTimer: TimerHandle | undefined;
  #probeDelay: number | undefined;
  #probing = false;
  readonly #attempts = new Set<Promise<void>>();
  readonly #controller = new AbortController();
  readonly #clock: Clock;

  private constructor(backend: string, dir: string, config: QueueConfig, deps: QueueDeps) {
    this.backend = backend;
    this.dir = dir;
    this.#config = config;
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
  }

  /**
   * Opens (creating) the queue directory, removes half-written files and notes whose message is
   * gone, resumes what waits. A disk that refuses (full, failing) opens the queue paused, and
   * the probe reads the directory once it can: the rest of the gateway starts regardless.
   */
  static async open(
    backend: string,
    dir: string,
    config: QueueConfig,
    deps: QueueDeps,
  ): Promise<DeliveryQueue> {
    const q = new DeliveryQueue(backend, dir, config, deps);
    try {
      await q.#scan();
    } catch (err) {
      if (!diskErrorCode(err)) throw err;
      q.#degrade("the queue directory cannot be read or made", err);
    }
    q.#pump();
    return q;
  }

  /** The name of the queue among the gateway's components (metrics, /readyz, status). */
  get #component(): string {
    return `queue/${this.backend}`;
  }

  /**
   * Reads the directory: removes what `tmp/` holds (never answered), `ready/<id>.state` notes
   * whose message is gone (kill -9 during a delivery) and `dead/<id>.json` notes whose message
   * never moved there (it still waits in `ready/`), and takes up what waits. Throws, having taken
   * up nothing, when the directory cannot be made or read.
   */
  async #scan(): Promise<void> {
    const dir = this.dir;
    for (const sub of ["tmp", "ready", "dead"]) {
      await Deno.mkdir(join(dir, sub), { recursive: true, mode: 0o700 });
    }
    for await (const e of Deno.readDir(join(dir, "tmp"))) {
      await Deno.remove(join(dir, "tmp", e.name)).catch(() => {});
    }
    // Notes and the probe are written through a temporary file beside them: a crash leaves it.
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.startsWith(PROBE)) {
        await Deno.remove(join(dir, e.name)).catch(() => {});
      }
    }
    const ready = await namesIn(join(dir, "ready"));
    const dead = await namesIn(join(dir, "dead"));
    for (const [sub, names] of [["ready", ready], ["dead", dead]] as const) {
      for (const base of names.get(".tmp") ?? []) {
        await Deno.remove(join(dir, sub, `${base}.tmp`)).catch(() => {});
      }
    }
    const removeNotes = async (sub: string, ext: string, keep: Set<string>) => {
      let removed = 0;
      for (const id of (sub === "ready" ? ready : dead).get(ext) ?? []) {
        if (keep.has(id)) continue;
        const gone = await Deno.remove(join(dir, sub, `${id}${ext}`)).then(() => true, () => false);
        if (gone) removed++;
      }
      return removed;
    };
    const messages = new Set(ready.get(".msg"));
    const deadMessages = new Set(dead.get(".msg"));
    const orphanStates = await removeNotes("ready", ".state", messages);
    const orphanReasons = await removeNotes("dead", ".json", deadMessages);
    if (orphanStates || orphanReasons) {
      this.#deps.logger.info("queue: removed notes whose message is gone", {
        backend: this.backend,
        state_files: orphanStates,
        dead_letter_notes: orphanReasons,
      });
    }
    const pending: Pending[] = [];
    let bytes = 0;
    // Only messages tried before have a note: the others are not looked for (a backlog of
    // thousands starts without as many failed reads).
    const noted = new Set(ready.get(".state"));
    for (const id of [...messages].sort()) {
      const path = join(dir, "ready", `${id}.msg`);
      const size = (await Deno.stat(path)).size;
      let state: { attempts?: number; last_error?: string } = {};
      try {
        if (noted.has(id)) {
          state = JSON.parse(await Deno.readTextFile(join(dir, "ready", `${id}.state`)));
        }
      } catch {
        // its note was lost with a crash, or cut: counted from 0
      }
      pending.push({
        id,
        size,
        accepted_at: Number(id.slice(0, 13)),
        attempts: state.attempts ?? 0,
        next_at: 0,
        last_error: state.last_error,
        inFlight: false,
      });
      bytes += size;
    }
    let deadBytes = 0;
    for (const id of deadMessages) {
      deadBytes += (await Deno.stat(join(dir, "dead", `${id}.msg`))).size;
    }
    // Nothing was taken in before the scan (accept and retry wait for it).
    this.#pending.push(...pending);
    this.#bytes += bytes;
    this.#dead = deadMessages.size;
    this.#deadBytes = deadBytes;
    this.#scanned = true;
    if (pending.length) {
      this.#deps.logger.info("queue resumed", {
        backend: this.backend,
        waiting: pending.length,
        dead: this.#dead,
      });
    }
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
    if (this.#degraded) {
      // Paused: its disk refused a write (the detail is in the log and the status, not here).
      return DeliveryQueue.#full(
        507,
        `the delivery queue of backend ${this.backend} is paused: its disk refuses writes`,
      );
    }
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
    const now = this.#clock.now();
    const id = newId(now);
    const headers = storedHeaders(req);
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
    // The gateway reads the client's body here, so body_timeout_secs bounds it (408).
    const source = req.body.forwardable();
    const body = source instanceof ReadableStream
      ? boundedClientBody(source, (req.body.limits.body_timeout_secs ?? 60) * 1000)
      : source;
    let size: number;
    try {
      size = await writeMessage(
        join(this.dir, "tmp"),
        join(this.dir, "ready"),
        header,
        body,
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
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const limit = this.#config.ordering === "fifo" ? 1 : this.#config.concurrency;
    const now = this.#clock.now();
    let nextDue = Infinity;
    for (const p of this.#pending) {
      if (this.#inFlight >= limit) break;
      // Refused for good: only its dead letter is owed (the probe writes it); never in the way.
      if (p.deadLetter) continue;
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
      const timer = this.#clock.setTimeout(() => this.#pump(), Math.max(0, nextDue - now));
      if (this.#clock === systemClock) Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  /**
   * `p`'s file read whole when small (read ahead while the message before it was delivered, in
   * `fifo` order). When the backend lets go of bodies (QueueDeps.releasesBody), files are read
   * into memory kept for the purpose (`buffer`, given back by #attempt), not fresh memory: under
   * the gateway's allocator setting each fresh 525 KB costs page faults of about 0.7 ms.
   */
  async #read(
    p: Pending,
    path: string,
  ): Promise<{ small?: SmallMessage; buffer?: Uint8Array<ArrayBuffer> }> {
    const ahead = this.#ahead?.id === p.id ? this.#ahead : undefined;
    this.#ahead = undefined;
    const early = ahead && await ahead.read.catch(() => undefined);
    if (early) return { small: early, buffer: ahead!.buffer };
    if (ahead?.buffer) this.#spare(ahead.buffer);
    const reuse = this.#deps.releasesBody?.() === true;
    const buffer = reuse && p.size <= WHOLE_READ_BYTES ? this.#buffer(p.size) : undefined;
    return { small: await readSmallMessage(path, WHOLE_READ_BYTES, buffer, p.size), buffer };
  }

  /**
   * In `fifo` order, reads the message after `p` while `p` is being delivered: called once `p`'s
   * request went out (a timer after the attempt started: the read is not in the way of the send,
   * it fills the wait for the destination's answer). Nothing when that message was taken up
   * meanwhile.
   */
  #readNext(p: Pending): void {
    if (this.#closed || this.#ahead || this.#config.ordering !== "fifo") return;
    const next = this.#pending[this.#pending.indexOf(p) + 1];
    if (!next || next.inFlight || next.deadLetter || next.size > WHOLE_READ_BYTES) return;
    const buffer = this.#deps.releasesBody?.() === true ? this.#buffer(next.size) : undefined;
    const read = readSmallMessage(
      join(this.dir, "ready", `${next.id}.msg`),
      WHOLE_READ_BYTES,
      buffer,
      next.size,
    );
    read.catch(() => {}); // a failed read ahead is read again (and judged) in its turn
    this.#ahead = { id: next.id, read, buffer };
  }

  /** Gives memory a message was read into back for the next (two kept at most). */
  #spare(buffer: Uint8Array<ArrayBuffer>): void {
    if (this.#spares.length < 2 && this.#deps.releasesBody?.() === true) {
      this.#spares.push(buffer);
    }
  }

  /** Memory kept for reading messages of `size` bytes (a spare one, else new). */
  #buffer(size: number): Uint8Array<ArrayBuffer> {
    const at = this.#spares.findIndex((b) => b.length >= size);
    if (at >= 0) return this.#spares.splice(at, 1)[0];
    // Rounded up to 1 MiB: instances of one series differ by a few bytes.
    return new Uint8Array(Math.min(WHOLE_READ_BYTES, Math.ceil(size / (1 << 20)) * (1 << 20)));
  }

  async #attempt(p: Pending): Promise<void> {
    const path = join(this.dir, "ready", `${p.id}.msg`);
    let buffer: Uint8Array<ArrayBuffer> | undefined;
    let verdict: Verdict;
    let answer: { status?: number; body?: string } = {};
    try {
      // A message up to WHOLE_READ_BYTES is read in one go (a DIMSE instance, most requests),
      // a larger one is checked, then its body streamed from the file.
      const read = await this.#read(p, path);
      const small = read.small;
      buffer = read.buffer;
      const stored = small ? undefined : await readMessage(path);
      const h = small?.header ?? stored!.header;
      const headers = new Headers(h.headers);
      headers.set("idempotency-key", h.id);
      let body = small
        ? (small.body.length > 0 ? new Body(small.body, h.content_type) : Body.empty())
        : stored!.bodyLength > 0
        ? new Body(bodyStream(path, stored!), h.content_type, undefined, stored!.bodyLength)
        : Body.empty();
      if (this.#config.fhir_conditional_create && isFhirCreate(h.method, h.path)) {
        const bytes = small
          ? (small.body.length <= MAX_CONDITIONAL_BODY ? small.body : undefined)
          : stored!.bodyLength <= MAX_CONDITIONAL_BODY
          ? await new Body(bodyStream(path, stored!), h.content_type).bytes()
          : undefined;
        const condition = bytes && ifNoneExist(bytes);
        if (condition) headers.set("if-none-exist", condition);
        if (bytes) body = new Body(bytes, h.content_type);
      }
      const req = storedRequest(h, headers, body);
      const signal = AbortSignal.any([
        this.#controller.signal,
        timeoutSignal(this.#clock, this.#deps.attemptTimeoutMs),
      ]);
      try {
        const answered = this.#deps.deliver(req, signal);
        // Timers run after the microtasks that send the request: the next read fills the wait.
        this.#readNextTimer = setTimeout(() => {
          this.#readNextTimer = undefined;
          this.#readNext(p);
        }, 0);
        const res = await answered;
        verdict = verdictOf(res);
        answer = { status: res.status, body: await bodyText(res) };
      } catch (err) {
        ({ verdict, answer } = thrownVerdict(err));
      }
    } catch (err) {
      // A damaged file cannot be delivered; it is kept for a person to look at.
      verdict = { kind: "dead", reason: (err as Error).message };
    }
    // The attempt is over and the backend read the body no longer: its memory takes the next.
    if (buffer) this.#spare(buffer);
    // Closing aborted the attempt (its failure says nothing of the message, whatever status the
    // abort became): it is sent again after the restart. A refusal that came first is too.
    if (this.#closed && verdict.kind !== "delivered") return;
    if (verdict.kind === "delivered") {
      this.#remove(p);
      this.#delivered++;
      // The next message goes at once; its files are removed meanwhile, once its request went
      // out (timers run after the microtasks that send it), on a thread of the runtime: an
      // unlink(2) waits for the file system's journal (up to 1 ms a file while storescp wrote on
      // the same disk), which must not hold the event loop. A crash before it sends the message
      // again after the restart, as one during the attempt would. A `.state` note exists only
      // after a failed attempt.
      const removed = afterSend().then(() => Deno.remove(path)).catch(() => {}).then(async () => {
        if (p.attempts > 0 || p.stateOwed) {
          await Deno.remove(join(this.dir, "ready", `${p.id}.state`)).catch(() => {});
        }
        // Space was freed: a paused queue looks at its disk again without waiting out the
        // backoff.
        if (this.#degraded && !this.#closed) this.#scheduleProbe(true);
      }).finally(() => this.#attempts.delete(removed));
      this.#attempts.add(removed);
      return;
    }
    p.attempts++;
    p.last_error = verdict.reason;
    const age = this.#clock.now() - p.accepted_at;
    const exhausted = (this.#config.max_attempts > 0 && p.attempts >= this.#config.max_attempts) ||
      age >= this.#config.max_age_secs * 1000;
    if (verdict.kind === "dead" || exhausted) {
      const letter: DeadLetter = {
        reason: verdict.kind === "dead" ? verdict.reason : `gave up: ${verdict.reason}`,
        answer,
        dead_at: new Date().toISOString(),
      };
      try {
        await this.#toDead(p, letter);
      } catch (err) {
        // Kept in ready/ and never sent again; the probe writes the dead letter later.
        p.deadLetter = letter;
        this.#degrade(`the dead letter of message ${p.id} cannot be written`, err);
      }
      return;
    }
    this.#retried++;
    // Full jitter between half and all of it, or the server's Retry-After when later.
    const wait = backoffMs(this.#config, p.attempts, verdict.retryAfterMs);
    p.next_at = this.#clock.now() + wait;
    try {
      await this.#noteAttempts(p);
    } catch (err) {
      p.stateOwed = true;
      this.#degrade(`the attempts of message ${p.id} cannot be noted`, err);
    }
    this.#deps.logger.warn("delivery failed; will retry", {
      backend: this.backend,
      delivery_id: p.id,
      attempt: p.attempts,
      retry_in_ms: Math.round(wait),
      reason: verdict.reason,
    });
  }

  /**
   * Writes `p`'s dead letter: why (`dead/<id>.json`, whole or not at all), then the message moved
   * to `dead/`. Throws with `p` still waiting in `ready/` when the disk refuses.
   */
  async #toDead(p: Pending, letter: DeadLetter): Promise<void> {
    const from = join(this.dir, "ready", `${p.id}.msg`);
    const to = join(this.dir, "dead", `${p.id}.msg`);
    await replaceFile(
      join(this.dir, "dead", `${p.id}.json`),
      JSON.stringify({
        reason: letter.reason,
        attempts: p.attempts,
        dead_at: letter.dead_at,
        status: letter.answer.status,
        answer: letter.answer.body?.slice(0, 4096),
      }),
      { sync: this.#config.fsync },
    );
    await Deno.rename(from, to);
    await Deno.remove(join(this.dir, "ready", `${p.id}.state`)).catch(() => {});
    p.deadLetter = undefined;
    this.#remove(p);
    this.#dead++;
    this.#deadBytes += p.size;
    this.#deadLettered++;
    this.#deps.logger.error("delivery given up: moved to the dead letters", {
      backend: this.backend,
      delivery_id: p.id,
      attempts: p.attempts,
      reason: letter.reason,
    });
  }

  /** Notes `p`'s attempts in `ready/<id>.state` (whole or not at all; no fsync, by design). */
  async #noteAttempts(p: Pending): Promise<void> {
    const path = join(this.dir, "ready", `${p.id}.state`);
    await replaceFile(path, JSON.stringify({ attempts: p.attempts, last_error: p.last_error }));
    p.stateOwed = false;
    // Delivered meanwhile: the note must not outlive its message.
    if (!this.#pending.includes(p)) await Deno.remove(path).catch(() => {});
  }

  /**
   * The disk refused a write of the queue (`what`): the queue pauses (new messages 507), says so
   * once (log, `gateway_component_degraded`, /readyz, status report) and probes with backoff.
   */
  #degrade(what: string, err: unknown): void {
    // A closed queue is no component any more (what it owes waits on disk for the next start).
    if (this.#closed) return;
    const code = diskErrorCode(err);
    const reason = `${what}: ${code ? describeDiskError(code) : (err as Error)?.message ?? err}`;
    const first = this.#degraded === undefined;
    if (this.#degraded) this.#degraded.reason = reason;
    else this.#degraded = { reason, since: this.#clock.now() };
    this.#deps.health.degraded(this.#component, reason, this);
    if (first) {
      this.#changed();
      this.#scheduleProbe();
    }
  }

  /**
   * Arms the next probe: after `initial_backoff_ms`, doubling up to `max_backoff_ms` (at most
   * 30 s); `soon` probes right away and starts the backoff over (space was just freed).
   */
  #scheduleProbe(soon = false): void {
    if (this.#closed || !this.#degraded || this.#probing) return;
    if (this.#probeTimer !== undefined) {
      if (!soon) return;
      this.#clock.clearTimeout(this.#probeTimer);
      this.#probeDelay = undefined;
    }
    const first = Math.max(10, this.#config.initial_backoff_ms);
    const cap = Math.max(first, Math.min(this.#config.max_backoff_ms, MAX_PROBE_MS));
    const delay = soon
      ? 0
      : this.#probeDelay === undefined
      ? first
      : Math.min(cap, this.#probeDelay * 2);
    this.#probeDelay = soon ? undefined : delay;
    const timer = this.#clock.setTimeout(() => {
      this.#probeTimer = undefined;
      void this.#probe();
    }, delay);
    if (this.#clock === systemClock) Deno.unrefTimer(timer);
    this.#probeTimer = timer;
  }

  /**
   * Tries what the paused queue owes: reading its directory (when start could not), a small
   * write, the dead letters and notes not yet written. All done: the queue resumes; else it
   * waits for the next probe. Never throws.
   */
  async #probe(): Promise<void> {
    if (this.#closed || !this.#degraded || this.#probing) return;
    this.#probing = true;
    try {
      if (!this.#scanned) {
        await this.#scan();
        // What waits is delivered even while paused: a delivery only frees space.
        this.#pump();
      }
      // A small file of its own (beside tmp/, ready/ and dead/): a page of space and a rename.
      await replaceFile(join(this.dir, PROBE), "probe\n");
      await Deno.remove(join(this.dir, PROBE)).catch(() => {});
      for (const p of [...this.#pending]) {
        if (!this.#pending.includes(p)) continue;
        if (p.deadLetter) await this.#toDead(p, p.deadLetter);
        else if (p.stateOwed) await this.#noteAttempts(p);
      }
      this.#recover();
    } catch (err) {
      // Still paused, for the reason it was paused for; the next probe comes later.
      this.#deps.logger.debug("queue: the disk still refuses writes", {
        backend: this.backend,
        error: (err as Error)?.message ?? String(err),
      });
    } finally {
      this.#probing = false;
    }
    this.#scheduleProbe();
  }

  /** The disk takes writes again: the queue resumes (said once). */
  #recover(): void {
    if (!this.#degraded) return;
    this.#degraded = undefined;
    this.#probeDelay = undefined;
    this.#deps.health.recovered(this.#component, this);
    this.#changed();
    this.#pump();
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
      oldest_age_secs: oldest ? Math.max(0, (this.#clock.now() - oldest) / 1000) : 0,
      delivered_total: this.#delivered,
      retried_total: this.#retried,
      dead_lettered_total: this.#deadLettered,
      degraded: this.#degraded
        ? { reason: this.#degraded.reason, since: new Date(this.#degraded.since).toISOString() }
        : null,
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
    this.#checkScanned();
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
    if (id && this.#resending.has(id)) throw resendRunning(id);
    let moved = 0;
    for (const i of ids.sort()) {
      if (this.#resending.has(i)) continue;
      const from = join(this.dir, "dead", `${i}.msg`);
      if (!(await exists(from))) {
        if (id) throw new GatewayError(404, "not_found", `no dead letter ${i} for ${this.backend}`);
        continue;
      }
      const size = (await Deno.stat(from)).size;
      try {
        await Deno.rename(from, join(this.dir, "ready", `${i}.msg`));
      } catch (err) {
        if (!diskErrorCode(err)) throw err;
        // Those moved so far wait in ready/; this one and the rest stay dead letters.
        this.#changed();
        this.#pump();
        throw insufficientStorage(this.backend, err);
      }
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
    this.#checkScanned();
    let removed = 0;
    for await (const e of Deno.readDir(join(this.dir, "dead"))) {
      await Deno.remove(join(this.dir, "dead", e.name)).catch(() => {});
      if (e.name.endsWith(".msg")) removed++;
    }
    this.#dead = 0;
    this.#deadBytes = 0;
    this.#changed();
    // Space was freed: a paused queue looks at its disk again without waiting out the backoff.
    if (this.#degraded) this.#scheduleProbe(true);
    return removed;
  }

  /** Dead letter `id`'s stored request and its body up to `maxBytes` (checked first). */
  async deadContent(id: string, maxBytes: number): Promise<DeadLetterContent> {
    // The id becomes a file name: nothing but a delivery id may reach the file system.
    checkId(id);
    const path = join(this.dir, "dead", `${id}.msg`);
    if (!(await exists(path))) {
      throw new GatewayError(404, "not_found", `no dead letter ${id} for ${this.backend}`);
    }
    const stored = await readMessage(path).catch((err) => {
      throw unreadableDeadLetter(id, err);
    });
    const length = Math.min(stored.bodyLength, Math.max(0, maxBytes));
    const body = new Uint8Array(length);
    {
      using file = await Deno.open(path, { read: true });
      await file.seek(stored.bodyOffset, Deno.SeekMode.Start);
      for (let at = 0; at < length;) {
        const n = await file.read(body.subarray(at));
        if (n === null) throw unreadableDeadLetter(id, new Error("shorter than its header says"));
        at += n;
      }
    }
    return {
      id,
      header: stored.header,
      body,
      size: stored.bodyLength,
      truncated: stored.bodyLength > length,
    };
  }

  /**
   * Sends dead letter `id` again as a new message (its request, `edit`'s body and content type):
   * written to `ready/` (fsynced as `accept` is), then the dead letter removed. A crash between
   * the two leaves both: the message is delivered, and the dead letter stays to be looked at.
   */
  async resendDead(id: string, edit: DeadLetterEdit): Promise<string> {
    this.#checkScanned();
    if (this.#closed) throw new GatewayError(503, "queue_closed", "the gateway is stopping");
    checkId(id);
    if (this.#resending.has(id)) throw resendRunning(id);
    this.#resending.add(id);
    try {
      const from = join(this.dir, "dead", `${id}.msg`);
      if (!(await exists(from))) {
        throw new GatewayError(404, "not_found", `no dead letter ${id} for ${this.backend}`);
      }
      if (this.#degraded) {
        throw DeliveryQueue.#full(
          507,
          `the delivery queue of backend ${this.backend} is paused: its disk refuses writes`,
        );
      }
      const stored = await readMessage(from).catch((err) => {
        throw unreadableDeadLetter(id, err);
      });
      const now = this.#clock.now();
      const header = resentHeader(stored.header, newId(now), now, edit);
      // The dead letter's bytes are freed once it is removed: they count as room for the new one.
      const room = this.#config.max_bytes - this.#bytes - this.#deadBytes + stored.size;
      let size: number;
      try {
        size = await writeMessage(
          join(this.dir, "tmp"),
          join(this.dir, "ready"),
          header,
          edit.body ?? (stored.bodyLength > 0 ? bodyStream(from, stored) : null),
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
      this.#pending.push({
        id: header.id,
        size,
        accepted_at: now,
        attempts: 0,
        next_at: 0,
        inFlight: false,
      });
      this.#bytes += size;
      // The new message is on disk: only now does the dead letter go (its note after it).
      try {
        await Deno.remove(from);
        this.#dead--;
        this.#deadBytes -= stored.size;
        await Deno.remove(join(this.dir, "dead", `${id}.json`)).catch(() => {});
      } catch (err) {
        // Purged meanwhile (gone), or the disk refuses: the new message stands either way.
        if (!(err instanceof Deno.errors.NotFound)) {
          this.#deps.logger.error("queue: a dead letter sent again could not be removed", {
            backend: this.backend,
            delivery_id: id,
            new_delivery_id: header.id,
            error: (err as Error)?.message ?? String(err),
          });
        }
      }
      this.#deps.logger.info("queue: dead letter sent again", {
        backend: this.backend,
        delivery_id: id,
        new_delivery_id: header.id,
        edited: edit.body !== undefined || edit.content_type !== undefined,
      });
      this.#changed();
      this.#pump();
      return header.id;
    } finally {
      this.#resending.delete(id);
    }
  }

  /** Refuses an operation on the dead letters before the directory could be read (507). */
  #checkScanned(): void {
    if (this.#scanned) return;
    throw new GatewayError(
      507,
      "insufficient_storage",
      `the delivery queue of backend ${this.backend} could not read its directory yet`,
    );
  }

  /** Stops delivering: running attempts are aborted (they will be retried after a restart). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    if (this.#probeTimer !== undefined) this.#clock.clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    clearTimeout(this.#readNextTimer);
    // A closed queue is no longer a component of the gateway (its successor reports its own).
    this.#deps.health.recovered(this.#component, this, true);
    this.#controller.abort(new DOMException("the queue is closing", "AbortError"));
    await Promise.allSettled([...this.#attempts]);
  }
}

/** Resolves after the microtasks queued now, such as those that send the next request. */
function afterSend(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A 507 for an operator's request that the queue's disk refused. */
function insufficientStorage(backend: string, err: unknown): GatewayError {
  const code = diskErrorCode(err);
  return new GatewayError(
    507,
    "insufficient_storage",
    `the disk of the delivery queue of backend ${backend} refuses writes` +
      (code ? `: ${describeDiskError(code)}` : ""),
  );
}

/** The 409 of a dead letter that another request is sending again. */
function resendRunning(id: string): GatewayError {
  return new GatewayError(409, "resend_running", `dead letter ${id} is being sent again`);
}

/** The delivery ids in `dir`, by file extension (`.msg`, `.state`, `.json`). */
async function namesIn(dir: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for await (const e of Deno.readDir(dir)) {
    const dot = e.name.lastIndexOf(".");
    if (!e.isFile || dot <= 0) continue;
    const ext = e.name.slice(dot);
    const list = out.get(ext) ?? [];
    list.push(e.name.slice(0, dot));
    out.set(ext, list);
  }
  return out;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
