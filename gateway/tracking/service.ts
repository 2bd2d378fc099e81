/**
 * Tracking in the main thread: the store's retention on the Clock, and the {@link TrackingControl}
 * the management API and the operations console use (search, view, replay, resend). Every
 * content view, replay and resend is written to the audit trail (who, which message, the edit's
 * hash and size; never content) and logged.
 */
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { type Clock, type Logger, systemClock } from "../../shared/mod.ts";
import type { AuditEntry } from "../audit/mod.ts";
import { sha256Hex } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import { type CapturedStage, openStages, unwrapContentKey } from "./content.ts";
import type { TrackingRecorder } from "./recorder.ts";
import {
  keyQueryParams,
  replayEnvelope,
  replayPipeline,
  type ReplayRuntime,
  runReplay,
} from "./replay.ts";
import type {
  OperatorAct,
  OperatorActDetail,
  ReplayOutcome,
  ReplayRequest,
  StageContent,
  TrackedMessageDetail,
  TrackingActor,
  TrackingControl,
  TrackingPage,
  TrackingQuery,
  TrackingStatus,
} from "./types.ts";
import { viewOf } from "./view.ts";
import { Buffer } from "node:buffer";

/** What the service needs from the gateway. */
export interface TrackingServiceDeps {
  /** The main thread's recorder (its store is the one read). */
  recorder: TrackingRecorder;
  /** The configuration serving now, to replay through; undefined while none serves. */
  runtime(): ReplayRuntime | undefined;
  /** The audit trail (absent without `[audit]`: the log line is then the only trace). */
  audit?: { add(entry: AuditEntry): Promise<void> | undefined };
  logger: Logger;
  clock?: Clock;
}

/** The main thread's tracking. */
export class TrackingService implements TrackingControl {
  readonly #deps: TrackingServiceDeps;
  readonly #clock: Clock;
  #config: GatewayConfig | undefined;
  #retention: number | undefined;
  #closed = false;

  constructor(deps: TrackingServiceDeps) {
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Takes a new configuration (start, reload): retention follows `[tracking]`. */
  configure(config: GatewayConfig): void {
    this.#config = config;
    if (this.#retention !== undefined) this.#clock.clearTimeout(this.#retention);
    this.#retention = undefined;
    if (config.tracking && !this.#closed) this.#scheduleRetention();
  }

  #scheduleRetention(): void {
    const t = this.#config?.tracking;
    if (!t) return;
    this.#retention = this.#clock.setTimeout(() => {
      this.#retention = undefined;
      this.prune();
      if (!this.#closed) this.#scheduleRetention();
    }, t.retention_interval_secs * 1000);
  }

  /** Content keys opened lately (an age decryption each), by their wrapped bytes. */
  readonly #keys = new Map<string, CryptoKey>();

  async #contentKey(wrapped: Uint8Array, identity: string): Promise<CryptoKey> {
    const id = Buffer.from(wrapped.subarray(wrapped.byteLength - 32)).toString("base64");
    let key = this.#keys.get(id);
    if (!key) {
      key = await unwrapContentKey(wrapped, identity);
      if (this.#keys.size >= 64) this.#keys.delete(this.#keys.keys().next().value!);
      this.#keys.set(id, key);
    }
    return key;
  }

  /** One pass of retention now (by age, then by size); returns how many records went. */
  prune(): number {
    const t = this.#config?.tracking;
    const store = this.#deps.recorder.store();
    if (!t || !store) return 0;
    try {
      const removed = store.prune(this.#clock.now() - t.max_age_hours * 3_600_000, t.max_bytes);
      if (removed) this.#deps.logger.info("tracking retention", { removed });
      return removed;
    } catch (err) {
      this.#deps.logger.error("tracking retention failed", { error: (err as Error).message });
      return 0;
    }
  }

  status(): TrackingStatus {
    const recorder = this.#deps.recorder;
    const store = this.#config?.tracking ? recorder.store() : undefined;
    let counts = { records: 0, bytes: 0, oldest: null as number | null };
    try {
      if (store) counts = store.counts();
    } catch {
      // Shown as degraded below.
    }
    const { dropped, written } = recorder.counts;
    return {
      enabled: this.#config?.tracking !== undefined,
      file: store?.file ?? null,
      records: counts.records,
      bytes: counts.bytes,
      oldest: counts.oldest === null ? null : new Date(counts.oldest).toISOString(),
      dropped,
      written,
      ...(recorder.problem ? { degraded: recorder.problem } : {}),
      pipelines: Object.values(this.#config?.pipelines ?? {})
        .filter((p) => p.tracking?.enabled)
        .map((p) => ({ name: p.name, content: p.tracking!.content })),
    };
  }

  #store() {
    const store = this.#config?.tracking ? this.#deps.recorder.store() : undefined;
    if (!store) {
      throw new GatewayError(
        this.#config?.tracking ? 503 : 404,
        this.#config?.tracking ? "tracking_unavailable" : "tracking_disabled",
        this.#config?.tracking
          ? `the tracking store cannot be opened: ${this.#deps.recorder.problem ?? "unknown"}`
          : "no pipeline tracks messages: add [pipelines.<name>.tracking] (docs/operations.md)",
      );
    }
    return store;
  }

  search(query: TrackingQuery): TrackingPage {
    return this.#store().search(query);
  }

  async get(
    id: string,
    options: { withContent: boolean; actor: TrackingActor },
  ): Promise<TrackedMessageDetail | undefined> {
    const found = this.#store().get(id);
    if (!found) return undefined;
    if (!options.withContent) return found.message;
    await this.#audit("tracking.content_viewed", options.actor, found.message.id, {
      pipeline: found.message.pipeline,
    });
    if (!found.content) return { ...found.message, content: [] };
    try {
      const stages = await this.#open(found);
      return { ...found.message, content: await Promise.all(stages.map(stageContent)) };
    } catch (err) {
      return { ...found.message, content_error: (err as Error).message };
    }
  }

  async #open(
    found: { message: { id: string }; content: Uint8Array | null; key: Uint8Array | null },
  ): Promise<CapturedStage[]> {
    const identity = this.#deps.recorder.key?.identity;
    if (!identity) {
      throw new Error("no [tracking] identity_file is configured: the content cannot be decrypted");
    }
    if (!found.content || !found.key) throw new Error("the content's key is not in the store");
    try {
      const key = await this.#contentKey(found.key, identity);
      return await openStages(found.content, key, found.message.id);
    } catch (err) {
      throw new Error(
        `the content cannot be decrypted with [tracking] identity_file (${
          (err as Error).message
        }): it was kept under another key`,
      );
    }
  }

  async replay(id: string, request: ReplayRequest, actor: TrackingActor): Promise<ReplayOutcome> {
    const found = this.#store().get(id);
    if (!found) throw new GatewayError(404, "message_not_found", `no tracked message ${id}`);
    const runtime = this.#deps.runtime();
    if (!runtime) throw new GatewayError(503, "not_ready", "the gateway is not serving yet");
    if (!found.content) {
      throw new GatewayError(
        409,
        "content_not_kept",
        `message ${id}'s content was not kept: its pipeline's tracking.content needs "received" ` +
          "for replay and resend",
      );
    }
    let stages: CapturedStage[];
    try {
      stages = await this.#open(found);
    } catch (err) {
      throw new GatewayError(409, "content_unreadable", (err as Error).message);
    }
    const received = stages.find((s) => s.stage === "received");
    if (!received) {
      throw new GatewayError(
        409,
        "content_not_kept",
        `message ${id} kept ${stages.map((s) => s.stage).join(", ")}, not "received": ` +
          "replay and resend need the request as it arrived",
      );
    }
    const pipeline = replayPipeline(runtime, found.message, request.backend);
    const env = replayEnvelope(
      found.message,
      received,
      request,
      runtime.config.proxy.content_limits,
      keyQueryParams(runtime.config),
    );
    const edited = request.body !== undefined;
    await this.#audit(edited ? "tracking.resent" : "tracking.replayed", actor, id, {
      pipeline: found.message.pipeline,
      request_id: env.id,
      ...(request.backend ? { backend: request.backend } : {}),
      ...(edited
        ? { edited_sha256: await sha256Hex(request.body!), edited_bytes: request.body!.byteLength }
        : {}),
    });
    return await runReplay(runtime, pipeline, env, {
      replay_of: id,
      actor: actor.name,
      edited,
    });
  }

  /**
   * Records an operator's act in the audit trail and the log. With `[audit] durability = "sync"`
   * the act waits for its record (an act that cannot be recorded is refused: 503).
   */
  recordAct(
    event: OperatorAct,
    actor: TrackingActor,
    messageId: string,
    extra: OperatorActDetail = {},
  ): Promise<void> {
    return this.#audit(event, actor, messageId, extra);
  }

  async #audit(
    event: OperatorAct,
    actor: TrackingActor,
    messageId: string,
    extra: Partial<AuditEntry>,
  ): Promise<void> {
    const entry: AuditEntry = {
      event,
      time: new Date(this.#clock.now()).toISOString(),
      actor: actor.name,
      actor_role: actor.role,
      ...(messageId ? { message_id: messageId } : {}),
      ...(actor.remote_addr ? { client_address: actor.remote_addr } : {}),
      ...extra,
    };
    this.#deps.logger.info(event.replace(".", " ").replace("_", " "), {
      actor: actor.name,
      role: actor.role,
      message_id: messageId,
      management_request_id: actor.request_id,
      ...(extra.backend ? { backend: extra.backend } : {}),
    });
    await this.#deps.audit?.add(entry);
  }

  /** Stops retention. The recorder is closed by its owner. */
  close(): void {
    this.#closed = true;
    if (this.#retention !== undefined) this.#clock.clearTimeout(this.#retention);
    this.#retention = undefined;
  }
}

/** A captured stage as the API shows it. */
export async function stageContent(s: CapturedStage): Promise<StageContent> {
  return {
    stage: s.stage,
    ...(s.backend ? { backend: s.backend } : {}),
    ...(s.method ? { method: s.method } : {}),
    ...(s.path !== undefined ? { path: s.path } : {}),
    ...(s.query ? { query: s.query } : {}),
    ...(s.status !== undefined ? { status: s.status } : {}),
    headers: s.headers,
    content_type: s.content_type,
    size: s.size,
    truncated: s.truncated,
    body_base64: Buffer.from(s.body).toString("base64"),
    view: await viewOf(s.body, s.content_type),
  };
}
