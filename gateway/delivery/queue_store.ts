/**
 * What a delivery queue is to the rest of the gateway, whatever keeps its messages: the file store
 * (queue.ts, one checked file per message, the default) or NATS JetStream (nats/, shared by the
 * gateways of a cluster). The management API, metrics, status reports, the workers' forwarders
 * and message tracking use only this face.
 */
import type { Clock, Logger } from "../../shared/mod.ts";
import type { QueueConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type { ComponentHealth } from "../observability/mod.ts";
import type { MessageHeader } from "./message_file.ts";

/** A dead letter's stored request with its body (read up to a bound). */
export interface DeadLetterContent {
  id: string;
  /** What the request was: method, path, query, headers, metadata, content type, pipeline… */
  header: MessageHeader;
  /** The body's first bytes (all of it unless `truncated`). */
  body: Uint8Array;
  /** The body's whole size, bytes. */
  size: number;
  truncated: boolean;
}

/** An operator's edit of a dead letter sent again (absent: as it was). */
export interface DeadLetterEdit {
  body?: Uint8Array;
  content_type?: string;
}

/** Counters and gauges of one queue (management API, metrics, status reports). */
export interface QueueStats {
  backend: string;
  /** Where the messages are: the file store's directory, or `nats:<stream>`. */
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
  /**
   * Set while the queue is paused (its disk refuses writes; its NATS servers cannot be reached):
   * why and since when (new messages get 507 / 503 `queue_full`). Null otherwise.
   */
  degraded: { reason: string; since: string } | null;
  /** Which store keeps the messages (absent: `file`). */
  store?: "file" | "nats";
}

/** What the queue reports to. */
export interface QueueDeps {
  logger: Logger;
  /** Delivers a rebuilt request through the backend; resolves with its answer or throws. */
  deliver(req: RequestEnvelope, signal: AbortSignal): Promise<ResponseEnvelope>;
  /**
   * True when the backend delivered to lets go of a request's body bytes once `deliver` settled
   * (Backend.releasesBody): the queue may read the next message into the same memory.
   */
  releasesBody?(): boolean;
  /** Time allowed for one delivery attempt, ms. */
  attemptTimeoutMs: number;
  /** Called after every change of the counters. */
  changed?(stats: QueueStats): void;
  /** Where the queue says it is degraded (paused by its disk) and recovered. */
  health: ComponentHealth;
  /** Time of the retries' back-off and the disk probe's (tests); default the system clock. */
  clock?: Clock;
}

/** One backend's delivery queue, whichever store keeps it. */
export interface QueueStore {
  /** The backend it delivers to. */
  readonly backend: string;
  /** Where its messages are (a directory, or `nats:<stream>`): a reload with the same keeps it. */
  readonly dir: string;
  /** Persists `req` (durable before this resolves) and returns its delivery id. */
  accept(req: RequestEnvelope): Promise<string>;
  /** New settings (a reload). */
  retune(config: QueueConfig, deps: QueueDeps): void;
  /** Counters now. */
  stats(): QueueStats;
  /** Metadata of waiting (`ready`) or dead messages; never their bodies. */
  list(state: "ready" | "dead", limit?: number): Promise<Record<string, unknown>[]>;
  /** One message's metadata (what it was, attempts, why it is dead); never its body. */
  inspect(id: string, state?: "ready" | "dead"): Promise<Record<string, unknown>>;
  /** Puts dead letters (one, or all) back in the queue; returns how many. */
  retryDead(id?: string): Promise<number>;
  /** Deletes every dead letter; returns how many. */
  purgeDead(): Promise<number>;
  /**
   * Dead letter `id`'s stored request and its body up to `maxBytes`. 400 `invalid_id` for what
   * is not a delivery id, 404 `not_found` for no such dead letter.
   */
  deadContent(id: string, maxBytes: number): Promise<DeadLetterContent>;
  /**
   * Sends dead letter `id` again as a new message: its request with `edit`'s body and content
   * type, durable before this resolves; then the dead letter is removed (a crash in between
   * leaves both: at least once, never lost). Returns the new delivery id; 404 `not_found`.
   */
  resendDead(id: string, edit: DeadLetterEdit): Promise<string>;
  /** Stops delivering: running attempts are aborted (they are sent again later). */
  close(): Promise<void>;
}
