/**
 * What the pipeline executor hands tracking for one message: a Capture, made only for a pipeline
 * that tracks, collects the backends called, the stages' content the pipeline keeps (read whole:
 * content tracking buffers bodies, within `max_body_size`), and at the end queues one record.
 */
import type { PipelineTrackingConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type { CapturedStage } from "./content.ts";
import { derivedFields, keptMetadata } from "./fields.ts";
import { recordId, type StoredRecord } from "./store.ts";
import type { TrackedBackendCall, TrackingStage } from "./types.ts";

/** Header names never kept: credentials. */
const CREDENTIAL_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|api[-_]?key|password/i;

/** Headers as a record, credentials left out, bounded (64 headers of 4 KiB). */
export function keptHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  headers.forEach((value, name) => {
    if (CREDENTIAL_HEADER.test(name) || ++n > 64) return;
    out[name] = value.length > 4096 ? value.slice(0, 4096) : value;
  });
  return out;
}

/** A record waiting to be written: its content still in the clear, in memory only. */
export interface PendingRecord extends Omit<StoredRecord, "content"> {
  captured?: CapturedStage[];
  /** Bytes of `captured`'s bodies. */
  capturedBytes: number;
}

/** Who a replayed message came from (set by replay.ts). */
export interface ReplayMark {
  replay_of: string;
  actor: string;
  edited: boolean;
}

/** The replays in flight, by their envelope (read when their capture starts). */
export const REPLAYS: WeakMap<RequestEnvelope, ReplayMark> = new WeakMap();

/** One tracked message on its way through the pipeline. */
export class Capture {
  readonly #enqueue: (record: PendingRecord) => void;
  readonly #config: PipelineTrackingConfig;
  readonly #pipeline: string;
  readonly #time = Date.now();
  readonly #start = performance.now();
  readonly #backends: TrackedBackendCall[] = [];
  readonly #stages: CapturedStage[] = [];
  #capturedBytes = 0;
  #hl7Text: string | undefined;
  #deliveryId: string | undefined;

  constructor(
    enqueue: (record: PendingRecord) => void,
    pipeline: string,
    config: PipelineTrackingConfig,
  ) {
    this.#enqueue = enqueue;
    this.#config = config;
    this.#pipeline = pipeline;
  }

  /** True when `stage`'s content is kept. */
  keeps(stage: TrackingStage): boolean {
    return this.#config.content.includes(stage);
  }

  /** The request as it arrived (before the middleware); undefined when there is nothing to read. */
  received(req: RequestEnvelope): Promise<void> | undefined {
    if (req.protocol !== "mllp" && !this.keeps("received")) return undefined;
    return this.#received(req);
  }

  async #received(req: RequestEnvelope): Promise<void> {
    if (req.protocol === "mllp") {
      // HL7 messages are small and already in memory: their PID-3 and accession are searchable.
      this.#hl7Text = (await req.body.text()).slice(0, 65_536);
    }
    if (this.keeps("received")) {
      await this.#request("received", req, undefined, { ...req.metadata });
    }
  }

  /** The request as the middleware left it. */
  async afterMiddleware(req: RequestEnvelope): Promise<void> {
    if (this.keeps("after_middleware")) await this.#request("after_middleware", req);
  }

  /** The request as sent to `backend`. */
  async backendRequest(backend: string, req: RequestEnvelope): Promise<void> {
    if (this.keeps("backend_request")) await this.#request("backend_request", req, backend);
  }

  /** `backend`'s answer, as it gave it (before the response middleware). */
  async backendResponse(backend: string, res: ResponseEnvelope): Promise<void> {
    if (!this.keeps("backend_response")) return;
    const bytes = await res.body.bytes();
    this.#add({
      stage: "backend_response",
      backend,
      status: res.status,
      headers: keptHeaders(res.headers),
      content_type: res.body.contentType,
      size: bytes.byteLength,
      truncated: bytes.byteLength > this.#config.max_content_bytes,
      body: bytes.subarray(0, this.#config.max_content_bytes),
    });
  }

  /**
   * A backend call ended (`status` null when it gave no answer). A queued backend's answer names
   * the delivery: its id becomes the message's `delivery_id`, the link to the queue.
   */
  backendCall(
    name: string,
    status: number | null,
    outcome: string,
    seconds: number,
    res?: ResponseEnvelope,
  ): void {
    const delivery = res?.status === 202 ? res.headers.get("x-delivery-id") : null;
    if (delivery) this.#deliveryId = delivery;
    this.#backends.push({
      name,
      status,
      outcome,
      duration_ms: Math.round(seconds * 100_000) / 100,
    });
  }

  async #request(
    stage: TrackingStage,
    req: RequestEnvelope,
    backend?: string,
    metadata?: Record<string, string>,
  ): Promise<void> {
    const bytes = await req.body.bytes();
    this.#add({
      stage,
      ...(backend ? { backend } : {}),
      method: req.method,
      path: req.path,
      query: req.queryString(),
      headers: keptHeaders(req.headers),
      content_type: req.body.contentType,
      size: bytes.byteLength,
      truncated: bytes.byteLength > this.#config.max_content_bytes,
      body: bytes.subarray(0, this.#config.max_content_bytes),
      ...(metadata ? { metadata } : {}),
    });
  }

  #add(stage: CapturedStage): void {
    // A copy: the body's buffer may be reused or changed once the request goes on.
    stage.body = stage.body.slice();
    this.#capturedBytes += stage.body.byteLength;
    this.#stages.push(stage);
  }

  /** The message ended with `status` (and `errorCode` when the pipeline failed): queued. */
  finish(req: RequestEnvelope, status: number, errorCode?: string): void {
    try {
      const replay = REPLAYS.get(req);
      const metadata = {
        ...keptMetadata(req.metadata),
        ...derivedFields(req.metadata.service, req.path, this.#hl7Text),
        ...(this.#deliveryId ? { delivery_id: this.#deliveryId } : {}),
      };
      const record: PendingRecord = {
        id: recordId(this.#time),
        time: this.#time,
        request_id: req.id,
        pipeline: this.#pipeline,
        endpoint: req.endpoint,
        protocol: req.protocol,
        method: req.method,
        path: req.path,
        status,
        ...(errorCode ? { error_code: errorCode } : {}),
        duration_ms: Math.round((performance.now() - this.#start) * 100) / 100,
        backends: this.#backends,
        metadata,
        stages: this.#stages.map((s) => s.backend ? `${s.stage}:${s.backend}` : s.stage),
        ...(replay
          ? { replay_of: replay.replay_of, actor: replay.actor, edited: replay.edited }
          : {}),
        captured: this.#stages,
        capturedBytes: this.#capturedBytes,
      };
      this.#enqueue(record);
    } catch {
      // Tracking never fails a request.
    }
  }
}
