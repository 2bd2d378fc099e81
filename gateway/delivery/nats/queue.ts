/**
 * A backend's delivery queue in NATS JetStream, shared by every gateway of a cluster
 * (`[backends.<name>.queue] store = "nats"`, docs/delivery.md, docs/scaling.md).
 *
 * - A message is published to `<subject>.msg.<id>` in the stream `<stream>` (work-queue retention,
 *   `nats_replicas` copies) and the sender is answered once JetStream acknowledged the publish:
 *   a majority of the replicas hold it. A body over `nats_max_payload` goes first to the object
 *   store bucket `<stream>_BODIES`, and the message points at it.
 * - Every gateway pulls from one durable consumer (`gateway`, explicit acks): whoever gets a
 *   message delivers it through its backend and acknowledges it after the destination's answer;
 *   a gateway that dies stops confirming (`working`) and JetStream hands the message to another
 *   after `nats_ack_wait_secs`. `fifo`: at most one message in flight for the whole cluster
 *   (`max_ack_pending = 1`), a failing head is held (confirmed) through its back-off; `parallel`:
 *   up to `concurrency` in flight, a failing message is given back with the back-off as delay.
 * - The retries, back-off, `max_attempts`, `max_age_secs` and verdicts are the file store's
 *   (attempt.ts, verdict.ts); a dead letter is published to `<subject>.dead.<id>` in
 *   `<stream>_DEAD` (with why) before the message leaves the queue.
 */
import {
  AckPolicy,
  type Consumer,
  type ConsumerMessages,
  DeliverPolicy,
  DiscardPolicy,
  Events,
  headers as natsHeaders,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type ObjectStore,
  RetentionPolicy,
  StorageType,
} from "nats";
import { type Clock, systemClock, timeoutSignal } from "../../../shared/mod.ts";
import { QUEUE_NATS_DEFAULTS, type QueueConfig } from "../../../shared/gateway_config/mod.ts";
import { Body, type RequestEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import { boundedClientBody } from "../../body_read.ts";
import type {
  DeadLetterContent,
  DeadLetterEdit,
  QueueDeps,
  QueueStats,
  QueueStore,
} from "../queue_store.ts";
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
} from "../attempt.ts";
import { type Verdict, verdictOf } from "../verdict.ts";
import { connectionKey, connectQueue } from "./connection.ts";
import { type DeadNote, decodeMessage, encodeMessage, type NatsMessageHeader } from "./message.ts";

/** The durable consumer every gateway pulls from. */
const CONSUMER = "gateway";
/** How long one pull waits for a message before asking again. */
const PULL_EXPIRES_MS = 5_000;
/** How often the counters are read from JetStream. */
const STATS_INTERVAL_MS = 1_000;
/** Longest wait between two tries after JetStream failed (setup, pulls). */
const MAX_RETRY_MS = 5_000;
/** Most messages looked at to list or retry the dead letters at once. */
const MAX_SCAN = 100_000;

/** The names a queue uses in JetStream. */
export interface NatsNames {
  /** The stream of the waiting messages. */
  stream: string;
  /** The stream of the dead letters. */
  dead: string;
  /** The object store bucket of bodies over `nats_max_payload`. */
  bodies: string;
  /** The subject prefix (`.msg.<id>`, `.dead.<id>`). */
  subject: string;
}

/** The stream, dead-letter stream, bucket and subject prefix of backend `backend`'s queue. */
export function natsNames(backend: string, config: QueueConfig): NatsNames {
  const stream = config.nats_stream ??
    `GATEWAY_QUEUE_${backend.toUpperCase().replace(/[^A-Z0-9_-]/g, "_")}`;
  const subject = config.nats_subject ??
    `gateway.queue.${backend.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return { stream, dead: `${stream}_DEAD`, bodies: `${stream}_BODIES`, subject };
}

/** Settings of a `nats` queue with their defaults. */
function settings(config: QueueConfig) {
  return {
    replicas: config.nats_replicas ?? QUEUE_NATS_DEFAULTS.nats_replicas,
    maxPayload: config.nats_max_payload ?? QUEUE_NATS_DEFAULTS.nats_max_payload,
    ackWaitMs: (config.nats_ack_wait_secs ?? QUEUE_NATS_DEFAULTS.nats_ack_wait_secs) * 1000,
    timeoutMs: (config.nats_timeout_secs ?? QUEUE_NATS_DEFAULTS.nats_timeout_secs) * 1000,
  };
}

/** JetStream's error for a message it refused, as the sender's 503/507. */
function publishRefusal(backend: string, err: unknown): GatewayError | undefined {
  // JetStream's reason is in the API error (the message alone may be only its code).
  const api = (err as { api_error?: { description?: string } })?.api_error?.description ?? "";
  const text = `${(err as Error)?.message ?? String(err)} ${api}`;
  const full = (status: 503 | 507, why: string) => {
    const e = new GatewayError(
      status,
      "queue_full",
      `the delivery queue of backend ${backend} ${why}`,
    );
    e.headers = { "retry-after": "30" };
    return e;
  };
  if (/maximum messages/i.test(text)) return full(503, "holds max_messages");
  if (/maximum bytes|insufficient resources|message size exceeds/i.test(text)) {
    return full(507, "is at max_bytes");
  }
  return undefined;
}

/** The 503 of a queue whose JetStream cannot take messages now. */
function unavailable(backend: string, why: string): GatewayError {
  const e = new GatewayError(
    503,
    "queue_unavailable",
    `the delivery queue of backend ${backend} cannot reach JetStream: ${why}`,
  );
  e.headers = { "retry-after": "5" };
  return e;
}

/** Failures worth trying again within the publish timeout (a leader being elected, a reconnect). */
function transient(err: unknown): boolean {
  const text = `${(err as { code?: string })?.code ?? ""} ${(err as Error)?.message ?? ""}`;
  return /503|no responders|timeout|TIMEOUT|disconnect|CONNECTION|closed|leader|not ready|unavailable/i
    .test(text);
}

/** Reads `stream` into memory while it fits `limit` bytes; else gives back what was read. */
async function readUpTo(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ bytes: Uint8Array; rest?: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
    if (size > limit) {
      // Too big to be inline: what was read, then the rest of the stream.
      const head = parts.splice(0);
      const rest = new ReadableStream<Uint8Array>({
        pull: async (c) => {
          const next = head.shift();
          if (next) return c.enqueue(next);
          const r = await reader.read();
          if (r.done) c.close();
          else c.enqueue(r.value);
        },
        cancel: (why) => reader.cancel(why),
      });
      return { bytes: new Uint8Array(0), rest };
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes };
}

/** Counts the bytes of `stream` and fails past `limit` (507). */
function counted(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  backend: string,
): { stream: ReadableStream<Uint8Array>; size: () => number } {
  let size = 0;
  const out = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        size += chunk.length;
        if (size > limit) {
          const e = new GatewayError(
            507,
            "queue_full",
            `the delivery queue of backend ${backend} has no room: the body is over ${limit} bytes`,
          );
          e.headers = { "retry-after": "30" };
          throw e;
        }
        c.enqueue(chunk);
      },
    }),
  );
  return { stream: out, size: () => size };
}

/** One message held by this gateway. */
interface Held {
  id: string;
  attempts: number;
  last_error?: string;
}

/** The JetStream handles of a connected queue. */
interface Handles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  bodies: ObjectStore;
  consumer: Consumer;
}

/** A backend's queue in NATS JetStream. */
export class NatsQueue implements QueueStore {
  /** The backend it delivers to. */
  readonly backend: string;
  /** `nats:<stream>`. */
  readonly dir: string;
  /** The connection settings it was opened with (connectionKey). */
  readonly key: string;
  /** Its names in JetStream. */
  readonly names: NatsNames;
  #config: QueueConfig;
  #deps: QueueDeps;
  readonly #clock: Clock;
  #handles: Handles | undefined;
  #closed = false;
  readonly #controller = new AbortController();
  readonly #loops = new Set<Promise<void>>();
  /** Deliveries running (awaited by close, which gives their messages back). */
  readonly #active = new Set<Promise<void>>();
  readonly #held = new Map<string, Held>();
  /** Dead letters this gateway is sending again (a second resend of one waits its turn: 409). */
  readonly #resending = new Set<string>();
  #delivered = 0;
  #retried = 0;
  #deadLettered = 0;
  #snapshot: QueueStats;
  #degraded: { reason: string; since: number } | undefined;
  #statsTimer: ReturnType<typeof setInterval> | undefined;
  #pulling = false;
  /** The running pull subscription (stopped by close). */
  #messages: ConsumerMessages | undefined;

  private constructor(backend: string, config: QueueConfig, deps: QueueDeps, key: string) {
    this.backend = backend;
    this.names = natsNames(backend, config);
    this.dir = `nats:${this.names.stream}`;
    this.key = key;
    this.#config = config;
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#snapshot = this.#emptyStats();
  }

  /**
   * Connects, makes (or updates) the streams, the consumer and the bucket, and starts pulling.
   * Servers that cannot be reached yet leave the queue degraded (new messages 503) while it
   * keeps trying in the background: the rest of the gateway starts regardless.
   */
  static async open(backend: string, config: QueueConfig, deps: QueueDeps): Promise<NatsQueue> {
    const q = new NatsQueue(backend, config, deps, await connectionKey(config));
    try {
      await q.#setup();
    } catch (err) {
      q.#degrade(`JetStream cannot be reached: ${(err as Error)?.message ?? err}`);
      q.#track(q.#retrySetup());
    }
    const timer = setInterval(() => void q.#refresh(), STATS_INTERVAL_MS);
    Deno.unrefTimer(timer);
    q.#statsTimer = timer;
    return q;
  }

  /** What identifies `config`'s connection (a reload with the same keeps the running queue). */
  static connectionKey(config: QueueConfig): Promise<string> {
    return connectionKey(config);
  }

  get #component(): string {
    return `queue/${this.backend}`;
  }

  #track(p: Promise<void>): void {
    this.#loops.add(p);
    p.finally(() => this.#loops.delete(p));
  }

  async #retrySetup(): Promise<void> {
    let wait = 250;
    while (!this.#closed && !this.#handles) {
      await this.#sleep(wait);
      wait = Math.min(MAX_RETRY_MS, wait * 2);
      if (this.#closed) return;
      try {
        await this.#setup();
      } catch (err) {
        this.#deps.logger.debug("queue: JetStream still cannot be reached", {
          backend: this.backend,
          error: (err as Error)?.message ?? String(err),
        });
      }
    }
  }

  async #setup(): Promise<void> {
    const s = settings(this.#config);
    const nc = await connectQueue(this.#config, `gateway queue ${this.backend}`);
    try {
      const jsm = await nc.jetstreamManager({ timeout: s.timeoutMs });
      const js = nc.jetstream({ timeout: s.timeoutMs });
      await this.#ensureStreams(jsm);
      await this.#ensureConsumer(jsm);
      const bodies = await js.views.os(this.names.bodies, {
        replicas: s.replicas,
        storage: StorageType.File,
      });
      const consumer = await js.consumers.get(this.names.stream, CONSUMER);
      if (this.#closed) {
        await nc.close();
        return;
      }
      this.#handles = { nc, js, jsm, bodies, consumer };
    } catch (err) {
      await nc.close().catch(() => {});
      throw err;
    }
    this.#watch(this.#handles.nc);
    this.#recover();
    this.#deps.logger.info("queue: connected to JetStream", {
      backend: this.backend,
      stream: this.names.stream,
      server: this.#handles.nc.getServer(),
    });
    this.#startPulling();
    void this.#refresh();
  }

  /** The queue's and the dead letters' streams, with the configured limits (made or updated). */
  async #ensureStreams(jsm: JetStreamManager): Promise<void> {
    const s = settings(this.#config);
    const limits = {
      max_msgs: this.#config.max_messages,
      max_bytes: this.#config.max_bytes,
      discard: DiscardPolicy.New,
      num_replicas: s.replicas,
      storage: StorageType.File,
      max_msg_size: s.maxPayload + 1024 * 1024,
    };
    await ensureStream(jsm, {
      name: this.names.stream,
      subjects: [`${this.names.subject}.msg.*`],
      retention: RetentionPolicy.Workqueue,
      ...limits,
    });
    await ensureStream(jsm, {
      name: this.names.dead,
      subjects: [`${this.names.subject}.dead.*`],
      retention: RetentionPolicy.Limits,
      ...limits,
    });
  }

  /** The durable consumer, as the ordering asks (made, or its limits updated). */
  async #ensureConsumer(jsm: JetStreamManager): Promise<void> {
    const s = settings(this.#config);
    const wanted = {
      durable_name: CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${this.names.subject}.msg.*`,
      ack_wait: s.ackWaitMs * 1_000_000,
      max_ack_pending: this.#config.ordering === "fifo" ? 1 : this.#config.concurrency,
      max_deliver: -1,
      num_replicas: s.replicas,
    };
    try {
      const info = await jsm.consumers.info(this.names.stream, CONSUMER);
      if (
        info.config.ack_wait !== wanted.ack_wait ||
        info.config.max_ack_pending !== wanted.max_ack_pending
      ) {
        await jsm.consumers.update(this.names.stream, CONSUMER, {
          ack_wait: wanted.ack_wait,
          max_ack_pending: wanted.max_ack_pending,
        });
      }
    } catch (err) {
      if (!/not found/i.test((err as Error)?.message ?? "")) throw err;
      await jsm.consumers.add(this.names.stream, wanted).catch((e) => {
        // Another gateway made it meanwhile.
        if (!/already/i.test((e as Error)?.message ?? "")) throw e;
      });
    }
  }

  /** Follows the connection: degraded while it is down, recovered when it is back. */
  #watch(nc: NatsConnection): void {
    this.#track(
      (async () => {
        for await (const s of nc.status()) {
          if (s.type === Events.Disconnect) {
            this.#degrade(`disconnected from JetStream (${s.data})`);
          } else if (s.type === Events.Reconnect) {
            this.#recover();
            this.#deps.logger.info("queue: reconnected to JetStream", {
              backend: this.backend,
              server: String(s.data),
            });
          }
        }
      })().catch(() => {}),
    );
    nc.closed().then(() => {
      if (!this.#closed) this.#degrade("the connection to JetStream closed");
    });
  }

  #degrade(reason: string): void {
    if (this.#closed) return;
    if (this.#degraded) this.#degraded.reason = reason;
    else this.#degraded = { reason, since: this.#clock.now() };
    this.#deps.health.degraded(this.#component, reason, this);
    this.#snapshot = { ...this.#snapshot, degraded: this.#degradedNow() };
  }

  #recover(): void {
    if (!this.#degraded) return;
    this.#degraded = undefined;
    this.#deps.health.recovered(this.#component, this);
    this.#snapshot = { ...this.#snapshot, degraded: null };
  }

  #degradedNow(): QueueStats["degraded"] {
    return this.#degraded
      ? { reason: this.#degraded.reason, since: new Date(this.#degraded.since).toISOString() }
      : null;
  }

  /** New settings (a reload with the same connection): the consumer follows the ordering. */
  retune(config: QueueConfig, deps: QueueDeps): void {
    const before = this.#config;
    this.#config = config;
    this.#deps = deps;
    const h = this.#handles;
    if (
      h && (before.max_messages !== config.max_messages || before.max_bytes !== config.max_bytes)
    ) {
      void this.#ensureStreams(h.jsm).catch((err) =>
        this.#deps.logger.error("queue: the streams' limits could not be updated", {
          backend: this.backend,
          error: (err as Error)?.message ?? String(err),
        })
      );
    }
    if (
      h && (before.ordering !== config.ordering || before.concurrency !== config.concurrency ||
        before.nats_ack_wait_secs !== config.nats_ack_wait_secs)
    ) {
      void this.#ensureConsumer(h.jsm).then(() => this.#startPulling()).catch((err) =>
        this.#deps.logger.error("queue: the consumer could not be updated", {
          backend: this.backend,
          error: (err as Error)?.message ?? String(err),
        })
      );
    }
  }

  /** Persists `req` in JetStream (acknowledged by its replicas) and returns its delivery id. */
  async accept(req: RequestEnvelope): Promise<string> {
    if (this.#closed) throw new GatewayError(503, "queue_closed", "the gateway is stopping");
    const h = this.#handles;
    if (!h) throw unavailable(this.backend, this.#degraded?.reason ?? "not connected yet");
    const now = this.#clock.now();
    const id = newId(now);
    const header: NatsMessageHeader = {
      id,
      backend: this.backend,
      pipeline: req.pipeline,
      endpoint: req.endpoint,
      protocol: req.protocol,
      accepted_at: now,
      method: req.method,
      path: req.path,
      query: req.queryString(),
      headers: storedHeaders(req),
      metadata: { ...req.metadata },
      content_type: req.body.contentType,
    };
    const declared = req.body.knownLength;
    if (declared !== null && declared > this.#config.max_bytes) {
      throw publishRefusal(this.backend, new Error("maximum bytes"))!;
    }
    const inlineLimit = this.#inlineLimit(h, header);
    const source = req.body.forwardable();
    let inline: Uint8Array = new Uint8Array(0);
    let big: ReadableStream<Uint8Array> | undefined;
    if (source instanceof Uint8Array) {
      if (source.length > inlineLimit) {
        big = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(source);
            c.close();
          },
        });
      } else inline = source;
    } else if (source) {
      const body = boundedClientBody(source, (req.body.limits.body_timeout_secs ?? 60) * 1000);
      const read = await readUpTo(body, inlineLimit);
      inline = read.bytes;
      big = read.rest;
    }
    await this.#store(h, header, inline, big);
    this.#changed();
    return id;
  }

  /**
   * How many body bytes go inline with `header`: up to nats_max_payload, and within what the
   * server takes in one message with the header (its max_payload, 1 MiB by default).
   */
  #inlineLimit(h: Handles, header: NatsMessageHeader): number {
    const serverMax = h.nc.info?.max_payload ?? Number.MAX_SAFE_INTEGER;
    const headerBytes = new TextEncoder().encode(JSON.stringify(header)).length + 1024;
    return Math.max(0, Math.min(settings(this.#config).maxPayload, serverMax - headerBytes));
  }

  /**
   * Puts a body too big to be inline (`big`) in the bucket under the message's id, then publishes
   * the message; resolves once JetStream acknowledged it. Nothing is left behind on failure.
   */
  async #store(
    h: Handles,
    header: NatsMessageHeader,
    inline: Uint8Array,
    big: ReadableStream<Uint8Array> | undefined,
  ): Promise<void> {
    const id = header.id;
    if (big) {
      const c = counted(big, this.#config.max_bytes, this.backend);
      try {
        const info = await h.bodies.put({ name: id }, c.stream);
        header.body_object = { name: id, size: info.size };
      } catch (err) {
        await h.bodies.delete(id).catch(() => {});
        if (err instanceof GatewayError) throw err;
        throw publishRefusal(this.backend, err) ??
          unavailable(this.backend, (err as Error)?.message ?? String(err));
      }
    }
    try {
      await this.#publish(h, `${this.names.subject}.msg.${id}`, encodeMessage(header, inline), id);
    } catch (err) {
      if (header.body_object?.name === id) await h.bodies.delete(id).catch(() => {});
      throw err;
    }
  }

  /**
   * Publishes until JetStream acknowledges, within `nats_timeout_secs` (the same message id
   * each time: JetStream keeps one copy of a repeated publish).
   */
  async #publish(h: Handles, subject: string, payload: Uint8Array, msgID: string): Promise<void> {
    const s = settings(this.#config);
    const deadline = this.#clock.now() + s.timeoutMs;
    let wait = 50;
    while (true) {
      try {
        const left = Math.max(100, deadline - this.#clock.now());
        await h.js.publish(subject, payload, { msgID, timeout: left });
        return;
      } catch (err) {
        const refused = publishRefusal(this.backend, err);
        if (refused) throw refused;
        if (!transient(err) || this.#clock.now() + wait >= deadline || this.#closed) {
          throw unavailable(this.backend, (err as Error)?.message ?? String(err));
        }
        await this.#sleep(wait);
        wait = Math.min(1_000, wait * 2);
      }
    }
  }

  /** How many deliveries this gateway runs at once (the consumer bounds the cluster's). */
  #limit(): number {
    return this.#config.ordering === "fifo" ? 1 : this.#config.concurrency;
  }

  /** Starts (or, after a change of ordering, restarts) taking messages from the consumer. */
  #startPulling(): void {
    if (this.#pulling) {
      // The running loop starts over with the new limit.
      this.#messages?.stop();
      return;
    }
    this.#pulling = true;
    this.#track(this.#pull().finally(() => this.#pulling = false));
  }

  /**
   * Takes messages from the consumer (a pull subscription the client keeps up across reconnects)
   * and runs up to #limit() deliveries at once; starts over after an error.
   */
  async #pull(): Promise<void> {
    let wait = 100;
    while (!this.#closed) {
      const h = this.#handles;
      if (!h) break;
      const limit = this.#limit();
      try {
        const messages = await h.consumer.consume({
          max_messages: limit,
          expires: PULL_EXPIRES_MS,
        });
        this.#messages = messages;
        if (this.#closed) messages.stop();
        for await (const m of messages) {
          wait = 100;
          if (this.#closed) {
            m.nak();
            break;
          }
          const handling = this.#handle(h, m).catch((err) => {
            this.#deps.logger.error("queue: a delivery failed unexpectedly", {
              backend: this.backend,
              error: (err as Error)?.message ?? String(err),
            });
            try {
              m.nak(this.#config.initial_backoff_ms);
            } catch {
              // the connection is gone: JetStream hands the message out again after ack_wait
            }
          });
          this.#active.add(handling);
          handling.finally(() => this.#active.delete(handling));
          while (this.#active.size >= limit && !this.#closed) await Promise.race(this.#active);
          if (limit !== this.#limit()) break;
        }
        messages.stop();
      } catch (err) {
        if (this.#closed) break;
        this.#deps.logger.debug("queue: pull from JetStream failed", {
          backend: this.backend,
          error: (err as Error)?.message ?? String(err),
        });
        if (/not found|deleted/i.test((err as Error)?.message ?? "")) {
          await this.#ensureConsumer(h.jsm).catch(() => {});
        }
      }
      if (this.#closed) break;
      await this.#sleep(wait);
      wait = Math.min(MAX_RETRY_MS, wait * 2);
    }
  }

  /** Delivers one message pulled from the stream until it is delivered, given back or dead. */
  async #handle(h: Handles, m: JsMsg): Promise<void> {
    const s = settings(this.#config);
    const beat = setInterval(() => {
      try {
        m.working();
      } catch {
        // disconnected: JetStream redelivers after ack_wait if the connection stays down
      }
    }, Math.max(250, Math.floor(s.ackWaitMs / 3)));
    const held: Held = { id: "", attempts: Math.max(0, m.info.redeliveryCount - 1) };
    try {
      let decoded: ReturnType<typeof decodeMessage>;
      try {
        decoded = decodeMessage(m.data);
      } catch (err) {
        // A payload that is not ours cannot be delivered; kept for a person to look at.
        await this.#toDead(h, m, undefined, m.data, {
          reason: (err as Error).message,
          attempts: held.attempts,
          dead_at: new Date().toISOString(),
        });
        return;
      }
      const header = decoded.header;
      held.id = header.id;
      this.#held.set(header.id, held);
      this.#changed();
      while (true) {
        const { verdict, answer } = await this.#attempt(h, header, decoded.body);
        if (verdict.kind === "delivered") {
          await this.#ack(m);
          if (header.body_object) await h.bodies.delete(header.body_object.name).catch(() => {});
          this.#delivered++;
          return;
        }
        // Closing aborted the attempt: another gateway (or this one, restarted) sends it again.
        if (this.#closed) {
          m.nak();
          return;
        }
        held.attempts++;
        held.last_error = verdict.reason;
        const age = this.#clock.now() - header.accepted_at;
        const exhausted =
          (this.#config.max_attempts > 0 && held.attempts >= this.#config.max_attempts) ||
          age >= this.#config.max_age_secs * 1000;
        if (verdict.kind === "dead" || exhausted) {
          await this.#toDead(h, m, header, decoded.body, {
            reason: verdict.kind === "dead" ? verdict.reason : `gave up: ${verdict.reason}`,
            attempts: held.attempts,
            dead_at: new Date().toISOString(),
            status: answer.status,
            answer: answer.body?.slice(0, 4096),
          });
          return;
        }
        this.#retried++;
        const wait = backoffMs(this.#config, held.attempts, verdict.retryAfterMs);
        this.#deps.logger.warn("delivery failed; will retry", {
          backend: this.backend,
          delivery_id: header.id,
          attempt: held.attempts,
          retry_in_ms: Math.round(wait),
          reason: verdict.reason,
        });
        if (this.#config.ordering === "parallel") {
          // Given back with a delay: any gateway takes it up then (its delivery count says how
          // many attempts were made).
          m.nak(Math.round(wait));
          return;
        }
        // fifo: the head is held, confirmed, through its back-off; nothing passes it.
        this.#changed();
        await this.#sleep(wait);
        if (this.#closed) {
          m.nak();
          return;
        }
      }
    } finally {
      clearInterval(beat);
      if (held.id) this.#held.delete(held.id);
      this.#changed();
    }
  }

  /** Acknowledges a delivered message (confirmed by the server, tried again a few times). */
  async #ack(m: JsMsg): Promise<void> {
    const s = settings(this.#config);
    for (let i = 0; i < 5; i++) {
      try {
        if (await m.ackAck({ timeout: s.timeoutMs })) return;
      } catch {
        // a leader election or a reconnect: try again
      }
      if (this.#closed) break;
      await this.#sleep(200 * (i + 1));
    }
    // Not confirmed: JetStream may hand the message out again (delivery is at least once).
    this.#deps.logger.warn("queue: the acknowledgement of a delivered message was not confirmed", {
      backend: this.backend,
      subject: m.subject,
    });
  }

  /** One attempt: the request rebuilt from the message, through the backend, and its verdict. */
  async #attempt(
    h: Handles,
    header: NatsMessageHeader,
    inline: Uint8Array,
  ): Promise<{ verdict: Verdict; answer: { status?: number; body?: string } }> {
    try {
      const headers = new Headers(header.headers);
      headers.set("idempotency-key", header.id);
      let body: Body;
      if (header.body_object) {
        const got = await h.bodies.get(header.body_object.name);
        if (!got) throw new Error(`the body object ${header.body_object.name} is missing`);
        body = new Body(got.data, header.content_type, undefined, got.info.size);
      } else {
        body = inline.length ? new Body(inline, header.content_type) : Body.empty();
      }
      if (this.#config.fhir_conditional_create && isFhirCreate(header.method, header.path)) {
        const size = header.body_object?.size ?? inline.length;
        const bytes = size <= MAX_CONDITIONAL_BODY ? await body.bytes() : undefined;
        const condition = bytes && ifNoneExist(bytes);
        if (condition) headers.set("if-none-exist", condition);
        if (bytes) body = new Body(bytes, header.content_type);
      }
      const req = storedRequest(header, headers, body);
      const signal = AbortSignal.any([
        this.#controller.signal,
        timeoutSignal(this.#clock, this.#deps.attemptTimeoutMs),
      ]);
      try {
        const res = await this.#deps.deliver(req, signal);
        return {
          verdict: verdictOf(res),
          answer: { status: res.status, body: await bodyText(res) },
        };
      } catch (err) {
        return thrownVerdict(err);
      }
    } catch (err) {
      // The body object cannot be read now (JetStream busy or gone): tried again later.
      return { verdict: { kind: "retry", reason: (err as Error).message }, answer: {} };
    }
  }

  /**
   * Publishes the dead letter (with why), then takes the message out of the queue. A dead letter
   * JetStream does not take leaves the message in the queue, given back with the longest back-off.
   */
  async #toDead(
    h: Handles,
    m: JsMsg,
    header: NatsMessageHeader | undefined,
    body: Uint8Array,
    note: DeadNote,
  ): Promise<void> {
    const id = header?.id ?? newId(this.#clock.now());
    const payload = header ? encodeMessage({ ...header, dead: note }, body) : body;
    try {
      const hdrs = natsHeaders();
      if (!header) hdrs.set("Gateway-Dead-Reason", note.reason.replace(/[\r\n]/g, " "));
      await h.js.publish(`${this.names.subject}.dead.${id}`, payload, {
        msgID: `dead-${id}-${m.seq}`,
        headers: hdrs,
      });
    } catch (err) {
      this.#deps.logger.error("queue: a dead letter could not be written; the message waits", {
        backend: this.backend,
        delivery_id: id,
        error: (err as Error)?.message ?? String(err),
      });
      m.nak(this.#config.max_backoff_ms);
      return;
    }
    await this.#ack(m);
    this.#deadLettered++;
    this.#deps.logger.error("delivery given up: moved to the dead letters", {
      backend: this.backend,
      delivery_id: id,
      attempts: note.attempts,
      reason: note.reason,
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve();
      const signal = this.#controller.signal;
      const timer = this.#clock.setTimeout(() => {
        signal.removeEventListener("abort", done);
        resolve();
      }, ms);
      if (this.#clock === systemClock) Deno.unrefTimer(timer as number);
      const done = () => {
        this.#clock.clearTimeout(timer);
        resolve();
      };
      signal.addEventListener("abort", done, { once: true });
    });
  }

  #emptyStats(): QueueStats {
    return {
      backend: this.backend,
      dir: this.dir,
      depth: 0,
      bytes: 0,
      in_flight: 0,
      retrying: 0,
      dead: 0,
      oldest_age_secs: 0,
      delivered_total: 0,
      retried_total: 0,
      dead_lettered_total: 0,
      degraded: null,
      store: "nats",
    };
  }

  /** Reads the counters of the streams and the consumer (the whole cluster's). */
  async #refresh(): Promise<void> {
    const h = this.#handles;
    if (!h || this.#closed) return;
    try {
      const [main, dead, consumer] = await Promise.all([
        h.jsm.streams.info(this.names.stream),
        h.jsm.streams.info(this.names.dead),
        h.jsm.consumers.info(this.names.stream, CONSUMER),
      ]);
      const first = main.state.messages > 0 ? Date.parse(main.state.first_ts) : NaN;
      const heldRetrying = [...this.#held.values()].filter((x) => x.attempts > 0).length;
      this.#snapshot = {
        ...this.#snapshot,
        depth: main.state.messages,
        bytes: main.state.bytes,
        in_flight: consumer.num_ack_pending,
        retrying: Math.min(main.state.messages, Math.max(consumer.num_redelivered, heldRetrying)),
        dead: dead.state.messages,
        oldest_age_secs: Number.isFinite(first) ? Math.max(0, (Date.now() - first) / 1000) : 0,
      };
      this.#changed();
    } catch {
      // JetStream busy (an election) or unreachable: the last figures stand until the next read.
    }
  }

  #changed(): void {
    this.#deps.changed?.(this.stats());
  }

  /** Counters now: the queue's depth, bytes and dead letters are the cluster's (read every second). */
  stats(): QueueStats {
    return {
      ...this.#snapshot,
      delivered_total: this.#delivered,
      retried_total: this.#retried,
      dead_lettered_total: this.#deadLettered,
      degraded: this.#degradedNow(),
    };
  }

  #connected(): Handles {
    const h = this.#handles;
    if (!h) throw unavailable(this.backend, this.#degraded?.reason ?? "not connected yet");
    return h;
  }

  /** Messages of `stream` in order, from its first, at most `limit` (deleted ones skipped). */
  async #scan(
    h: Handles,
    stream: string,
    limit: number,
    each: (seq: number, payload: Uint8Array, subject: string) => Promise<void> | void,
  ): Promise<void> {
    const info = await h.jsm.streams.info(stream);
    let found = 0;
    let looked = 0;
    for (
      let seq = Math.max(1, info.state.first_seq);
      seq <= info.state.last_seq && found < limit && looked < MAX_SCAN;
      seq++
    ) {
      looked++;
      let sm;
      try {
        sm = await h.jsm.streams.getMessage(stream, { seq });
      } catch (err) {
        if (/no message found|not found/i.test((err as Error)?.message ?? "")) continue;
        throw err;
      }
      found++;
      await each(seq, sm.data, sm.subject);
    }
  }

  /** One message's metadata from its payload (never its body). */
  #describe(
    payload: Uint8Array,
    state: "ready" | "dead",
    subject: string,
  ): Record<string, unknown> {
    let decoded;
    try {
      decoded = decodeMessage(payload);
    } catch (err) {
      return {
        id: subject.slice(subject.lastIndexOf(".") + 1),
        state,
        error: (err as Error).message,
      };
    }
    const hd = decoded.header;
    const held = this.#held.get(hd.id);
    return {
      id: hd.id,
      state,
      accepted_at: new Date(hd.accepted_at).toISOString(),
      pipeline: hd.pipeline,
      endpoint: hd.endpoint,
      method: hd.method,
      path: hd.path,
      body_bytes: hd.body_object?.size ?? decoded.body.length,
      content_type: hd.content_type,
      attempts: held?.attempts ?? hd.dead?.attempts ?? 0,
      last_error: held?.last_error ?? hd.dead?.reason,
      ...(hd.dead ? { dead: hd.dead } : {}),
    };
  }

  /** Metadata of waiting (`ready`) or dead messages, oldest first; never their bodies. */
  async list(state: "ready" | "dead", limit = 100): Promise<Record<string, unknown>[]> {
    const h = this.#connected();
    const out: Record<string, unknown>[] = [];
    await this.#scan(
      h,
      state === "ready" ? this.names.stream : this.names.dead,
      limit,
      (_seq, payload, subject) => {
        out.push(this.#describe(payload, state, subject));
      },
    );
    return out;
  }

  /** The stored message `id` in `state`'s stream, or undefined. */
  async #find(h: Handles, id: string, state: "ready" | "dead") {
    const stream = state === "ready" ? this.names.stream : this.names.dead;
    const subject = `${this.names.subject}.${state === "ready" ? "msg" : "dead"}.${id}`;
    try {
      return await h.jsm.streams.getMessage(stream, { last_by_subj: subject });
    } catch (err) {
      if (/no message found|not found/i.test((err as Error)?.message ?? "")) return undefined;
      throw err;
    }
  }

  /** One message's metadata (what it was, attempts, why it is dead); never its body. */
  async inspect(id: string, state?: "ready" | "dead"): Promise<Record<string, unknown>> {
    checkId(id);
    const h = this.#connected();
    for (const where of state ? [state] : (["ready", "dead"] as const)) {
      const sm = await this.#find(h, id, where);
      if (sm) return this.#describe(sm.data, where, sm.subject);
    }
    throw new GatewayError(404, "not_found", `no message ${id} in the queue of ${this.backend}`);
  }

  /** Puts dead letters (one, or all) back in the queue; returns how many. */
  async retryDead(id?: string): Promise<number> {
    const h = this.#connected();
    const letters: { seq: number; payload: Uint8Array }[] = [];
    if (id) {
      checkId(id);
      const sm = await this.#find(h, id, "dead");
      if (!sm) throw new GatewayError(404, "not_found", `no dead letter ${id} for ${this.backend}`);
      letters.push({ seq: sm.seq, payload: sm.data });
    } else {
      await this.#scan(h, this.names.dead, MAX_SCAN, (seq, payload) => {
        letters.push({ seq, payload });
      });
    }
    if (id && this.#resending.has(id)) {
      throw new GatewayError(409, "resend_running", `dead letter ${id} is being sent again`);
    }
    let moved = 0;
    for (const letter of letters) {
      let decoded;
      try {
        decoded = decodeMessage(letter.payload);
      } catch {
        continue; // not a message of ours: it stays for a person to look at
      }
      const { dead: _dead, ...header } = decoded.header;
      if (this.#resending.has(header.id)) continue;
      await this.#publish(
        h,
        `${this.names.subject}.msg.${header.id}`,
        encodeMessage(header, decoded.body),
        `${header.id}-retry-${letter.seq}`,
      );
      await h.jsm.streams.deleteMessage(this.names.dead, letter.seq, false).catch(() => {});
      moved++;
    }
    void this.#refresh();
    return moved;
  }

  /** Deletes every dead letter (and their bodies kept as objects); returns how many. */
  async purgeDead(): Promise<number> {
    const h = this.#connected();
    const objects: string[] = [];
    await this.#scan(h, this.names.dead, MAX_SCAN, (_seq, payload) => {
      try {
        const name = decodeMessage(payload).header.body_object?.name;
        if (name) objects.push(name);
      } catch {
        // not ours: purged with the rest
      }
    });
    const purged = await h.jsm.streams.purge(this.names.dead);
    for (const name of objects) await h.bodies.delete(name).catch(() => {});
    void this.#refresh();
    return purged.purged;
  }

  /** Dead letter `id`'s stored request and its body up to `maxBytes` (from the bucket if there). */
  async deadContent(id: string, maxBytes: number): Promise<DeadLetterContent> {
    checkId(id);
    const h = this.#connected();
    const sm = await this.#find(h, id, "dead");
    if (!sm) throw new GatewayError(404, "not_found", `no dead letter ${id} for ${this.backend}`);
    let decoded;
    try {
      decoded = decodeMessage(sm.data);
    } catch (err) {
      throw unreadableDeadLetter(id, err);
    }
    const { dead: _dead, body_object: object, ...header } = decoded.header;
    const limit = Math.max(0, maxBytes);
    if (!object) {
      return {
        id,
        header,
        body: decoded.body.slice(0, limit),
        size: decoded.body.length,
        truncated: decoded.body.length > limit,
      };
    }
    const got = await h.bodies.get(object.name).catch((err) => {
      throw unavailable(this.backend, (err as Error)?.message ?? String(err));
    });
    if (!got) throw unreadableDeadLetter(id, new Error(`its body ${object.name} is missing`));
    const { bytes, rest } = await readUpTo(got.data, limit);
    // Over the bound: the first `limit` bytes of what was read, the rest not read.
    let body = bytes;
    if (rest) {
      const reader = rest.getReader();
      body = new Uint8Array(limit);
      let at = 0;
      while (at < limit) {
        const { done, value } = await reader.read();
        if (done) break;
        const take = value.subarray(0, limit - at);
        body.set(take, at);
        at += take.length;
      }
      await reader.cancel().catch(() => {});
      body = body.subarray(0, at);
    }
    return { id, header, body, size: object.size, truncated: object.size > body.length };
  }

  /**
   * Sends dead letter `id` again as a new message (its request, `edit`'s body and content type):
   * published and acknowledged by JetStream, then the dead letter deleted (a crash in between
   * leaves both: at least once, never lost). An unedited body kept in the bucket stays there,
   * now the new message's.
   */
  async resendDead(id: string, edit: DeadLetterEdit): Promise<string> {
    if (this.#closed) throw new GatewayError(503, "queue_closed", "the gateway is stopping");
    checkId(id);
    const h = this.#connected();
    if (this.#resending.has(id)) {
      throw new GatewayError(409, "resend_running", `dead letter ${id} is being sent again`);
    }
    this.#resending.add(id);
    try {
      const sm = await this.#find(h, id, "dead");
      if (!sm) throw new GatewayError(404, "not_found", `no dead letter ${id} for ${this.backend}`);
      let decoded;
      try {
        decoded = decodeMessage(sm.data);
      } catch (err) {
        throw unreadableDeadLetter(id, err);
      }
      const old = decoded.header;
      const now = this.#clock.now();
      const header: NatsMessageHeader = resentHeader(old, newId(now), now, edit);
      if (edit.body === undefined) {
        // The body as it was: inline, or the same object of the bucket.
        if (old.body_object) header.body_object = old.body_object;
        await this.#store(h, header, decoded.body, undefined);
      } else {
        const bytes = edit.body;
        if (bytes.length > this.#config.max_bytes) {
          throw publishRefusal(this.backend, new Error("maximum bytes"))!;
        }
        const big = bytes.length > this.#inlineLimit(h, header)
          ? new ReadableStream<Uint8Array>({
            start(c) {
              c.enqueue(bytes);
              c.close();
            },
          })
          : undefined;
        await this.#store(h, header, big ? new Uint8Array(0) : bytes, big);
      }
      // The new message is held by JetStream: only now does the dead letter go.
      try {
        await h.jsm.streams.deleteMessage(this.names.dead, sm.seq, false);
        // An edited body replaced the one kept in the bucket: that one is no one's now.
        if (edit.body !== undefined && old.body_object) {
          await h.bodies.delete(old.body_object.name).catch(() => {});
        }
      } catch (err) {
        this.#deps.logger.error("queue: a dead letter sent again could not be deleted", {
          backend: this.backend,
          delivery_id: id,
          new_delivery_id: header.id,
          error: (err as Error)?.message ?? String(err),
        });
      }
      this.#deps.logger.info("queue: dead letter sent again", {
        backend: this.backend,
        delivery_id: id,
        new_delivery_id: header.id,
        edited: edit.body !== undefined || edit.content_type !== undefined,
      });
      void this.#refresh();
      return header.id;
    } finally {
      this.#resending.delete(id);
    }
  }

  /** Stops pulling; running attempts are aborted and their messages given back at once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#messages?.stop();
    if (this.#statsTimer !== undefined) clearInterval(this.#statsTimer);
    this.#deps.health.recovered(this.#component, this, true);
    this.#controller.abort(new DOMException("the queue is closing", "AbortError"));
    // The running deliveries give their messages back (nak) before the connection closes.
    await Promise.allSettled([...this.#active]);
    const h = this.#handles;
    if (h) await h.nc.close().catch(() => {});
    // Pulls still waiting end with the connection (the client settles none of them: not awaited).
  }
}

/** Makes the stream `config.name`, or brings its limits to `config` when it exists. */
async function ensureStream(
  jsm: JetStreamManager,
  config: Parameters<JetStreamManager["streams"]["add"]>[0] & { name: string },
): Promise<void> {
  try {
    const info = await jsm.streams.info(config.name);
    const c = info.config;
    if (
      c.max_msgs !== config.max_msgs || c.max_bytes !== config.max_bytes ||
      c.num_replicas !== config.num_replicas || c.max_msg_size !== config.max_msg_size
    ) {
      await jsm.streams.update(config.name, {
        ...c,
        max_msgs: config.max_msgs,
        max_bytes: config.max_bytes,
        num_replicas: config.num_replicas,
        max_msg_size: config.max_msg_size,
      });
    }
  } catch (err) {
    if (!/not found/i.test((err as Error)?.message ?? "")) throw err;
    await jsm.streams.add(config).catch((e) => {
      // Another gateway made it meanwhile.
      if (!/already in use|exists/i.test((e as Error)?.message ?? "")) throw e;
    });
  }
}
