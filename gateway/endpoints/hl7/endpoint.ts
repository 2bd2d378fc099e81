/**
 * The `hl7` endpoint: every MLLP message of a connection is read (its MSH only), checked against
 * the endpoint's policy, run through the pipeline and answered with the acknowledgements its
 * mode asks for (ack_plan.ts). The outcome: `accept` on a 2xx answer (with a durable queue on the
 * primary backend, that is once the message is on disk), `error` on a backend failure or a 5xx,
 * `reject` on an unparseable message, a refused facility or a 4xx. The primary `hl7` backend's
 * own ACK is passed on when it acknowledges this message's control id. Each message ends in a
 * record: metrics, the access log line `hl7 message` and the audit record (never the content).
 * A batch (FHS/BHS) frame: each of its messages so, in order, answered with one response batch
 * (batch.ts); a batch over `max_batch_messages` or one that cannot be read gets one `AR`.
 */
import {
  type AckCode,
  buildAck,
  type Hl7Batch,
  Hl7Error,
  type Hl7ErrorDetail,
  type Hl7Header,
  type Hl7Json,
  type Hl7Limits,
  hl7Limits,
  isHl7Batch,
  parseHl7,
  readAck,
  readFirstHl7Header,
  readHl7Header,
} from "../../codecs/mod.ts";
import type { EndpointConfig } from "../../../shared/gateway_config/mod.ts";
import { AddressRanges } from "../../../shared/net/mod.ts";
import type { MllpFrameError, MllpHandler, MllpTlsServer } from "../../adapters/mllp/mod.ts";
import { GatewayError, toGatewayError } from "../../errors.ts";
import type { ResponseEnvelope } from "../../envelope.ts";
import {
  type BuiltPipeline,
  type ExecutorDeps,
  RequestRecord,
  runPipeline,
} from "../../pipeline/mod.ts";
import { ackCodes, type AckMode, ackStatus, type Verdict } from "./ack_plan.ts";
import { batchMessages, batchSize, buildBatchAck } from "./batch.ts";
import { hl7Envelope } from "./message.ts";

/** Options of an hl7 endpoint (validated by the config schema). */
export interface Hl7Options {
  bind_addr: string;
  port: number;
  max_message_bytes: number;
  idle_timeout_secs: number;
  max_connections: number;
  ack_mode: AckMode;
  allowed_sending_facilities?: string[];
  /** Messages accepted in one batch (FHS/BHS) frame. */
  max_batch_messages: number;
  tls_cert_path?: string;
  tls_key_path?: string;
  tls_client_ca_path?: string;
  /** Addresses and CIDR ranges served; absent: any. */
  allowed_source_addresses?: string[];
  /** Validation's opt-out of peer authentication beyond loopback (nothing to do at run time). */
  allow_unauthenticated: boolean;
}

/** Keeps a config generation alive while its messages run. */
export interface Tracker {
  acquire(): void;
  release(): void;
}

/** The listener key of an hl7 endpoint: its bind address and port. */
export function hl7ListenerKey(options: Record<string, unknown>): string {
  return `${options.bind_addr}:${options.port}`;
}

const DECODER = new TextDecoder();
const ENCODER = new TextEncoder();

/** What the pipeline's outcome says, and the problem to name in ERR. */
interface Outcome {
  verdict: Verdict;
  /** The primary hl7 backend's receiver's own ACK, sent instead of ours when codes agree. */
  passThrough?: string;
  /** Its MSA-1. */
  passThroughCode?: AckCode;
  /** False when the message was only queued: the application's answer is not known yet. */
  applicationKnown: boolean;
  error?: Hl7ErrorDetail;
  errorCode?: string;
}

/** Lets go of an answer's body unread. */
function discard(res: ResponseEnvelope): void {
  const source = res.body.forwardable();
  if (source instanceof ReadableStream) source.cancel().catch(() => {});
}

/** The ERR detail of a codec error (HL7 table 0357). */
function codecDetail(err: Hl7Error): Hl7ErrorDetail {
  const code = err.code === "no_msh" ? "100" : err.code === "too_large" ? "207" : "102";
  return { code, segment: err.segment ?? "MSH", field: err.field, text: err.message };
}

/** An hl7 endpoint bound to its pipeline. */
export class Hl7Endpoint {
  readonly config: EndpointConfig;
  readonly pipeline: BuiltPipeline;
  readonly options: Hl7Options;
  readonly key: string;
  /** TLS material of the listener (read at build); absent: plain TCP. */
  readonly tls: MllpTlsServer | undefined;
  readonly #facilities: ReadonlySet<string> | undefined;
  readonly #sources: AddressRanges | undefined;
  readonly #limits: Hl7Limits;
  #deps: ExecutorDeps | undefined;
  #tracker: Tracker | undefined;

  constructor(config: EndpointConfig, pipeline: BuiltPipeline, tls?: MllpTlsServer) {
    this.config = config;
    this.pipeline = pipeline;
    this.options = config.options as unknown as Hl7Options;
    this.key = hl7ListenerKey(config.options);
    this.tls = tls;
    const f = this.options.allowed_sending_facilities;
    this.#facilities = f ? new Set(f) : undefined;
    const sources = this.options.allowed_source_addresses;
    this.#sources = sources ? new AddressRanges(sources) : undefined;
    this.#limits = hl7Limits({ maxBytes: this.options.max_message_bytes });
  }

  /** Attach the generation's executor dependencies and in-flight tracker. */
  attach(deps: ExecutorDeps, tracker: Tracker): void {
    this.#deps = deps;
    this.#tracker = tracker;
  }

  /** The executor dependencies (logger, metrics, audit) of the generation. */
  get deps(): ExecutorDeps {
    return this.#deps!;
  }

  /** Whether a connection from `remoteAddr` may be served (`allowed_source_addresses`). */
  acceptsFrom(remoteAddr: string | undefined): boolean {
    return this.#sources === undefined ||
      (remoteAddr !== undefined && this.#sources.has(remoteAddr));
  }

  /** The handler of one connection from `remoteAddr`. */
  connection(remoteAddr: string | undefined): MllpHandler {
    const log = this.#deps!.logger;
    return {
      message: (payload, signal) => this.#message(payload, remoteAddr, signal),
      framingError: (err) => this.#framingError(err, remoteAddr),
      closed: (reason, pending, detail) => {
        if (reason === "peer_closed" && pending === 0) return;
        if (reason === "shutdown") return;
        log.warn("HL7 connection closed", {
          endpoint: this.config.name,
          remote_addr: remoteAddr,
          reason,
          ...(pending ? { pending_bytes: pending } : {}),
          ...(detail ? { detail } : {}),
        });
      },
    };
  }

  /** A frame that breaks MLLP: a reject naming the limit for one too large, else nothing. */
  #framingError(err: MllpFrameError, remoteAddr: string | undefined): Uint8Array[] {
    this.#deps!.metrics.errorCode(`hl7_${err.code}`);
    if (err.code !== "too_large") return [];
    let header: Hl7Header | undefined;
    try {
      header = readHl7Header(DECODER.decode(err.head ?? new Uint8Array(0)));
    } catch {
      header = undefined;
    }
    const verdict: Verdict = "reject";
    const [code] = ackCodes(
      this.options.ack_mode,
      header?.acceptAckType ?? "",
      header?.applicationAckType ?? "",
      verdict,
    ).concat(["AR"]);
    this.#deps!.logger.warn("HL7 message too large", {
      endpoint: this.config.name,
      remote_addr: remoteAddr,
      control_id: header?.controlId,
      limit: this.options.max_message_bytes,
    });
    return [ENCODER.encode(buildAck(header, {
      code,
      errors: [{
        code: "207",
        text: `message larger than ${this.options.max_message_bytes} bytes (max_message_bytes)`,
      }],
    }))];
  }

  /** One message: its acknowledgements, once the pipeline (and the audit record) are done. */
  async #message(
    payload: Uint8Array,
    remoteAddr: string | undefined,
    signal: AbortSignal,
  ): Promise<Uint8Array[]> {
    let header: Hl7Header;
    const text = DECODER.decode(payload);
    try {
      // A message's MSH; a batch's (FHS/BHS first) first MSH.
      header = readFirstHl7Header(text);
    } catch (err) {
      if (!(err instanceof Hl7Error)) throw err;
      return await this.#unparseable(err, payload, remoteAddr, signal);
    }
    let parsed: Hl7Json;
    try {
      // The whole message is checked (one linear pass) so a broken one is refused here, not by
      // whoever reads it after it was acknowledged.
      parsed = parseHl7(text, this.#limits);
    } catch (err) {
      if (!(err instanceof Hl7Error)) throw err;
      return await this.#unparseable(err, payload, remoteAddr, signal, header);
    }
    if (isHl7Batch(parsed)) {
      return await this.#batch(text, parsed, header, payload, remoteAddr, signal);
    }
    return await this.#one(header, payload, remoteAddr, signal);
  }

  /**
   * A batch (FHS/BHS, or several MSH in one frame): each message through the pipeline in order,
   * as its own envelope with its own record, then one response batch with all their ACKs.
   */
  async #batch(
    text: string,
    batch: Hl7Batch,
    header: Hl7Header,
    payload: Uint8Array,
    remoteAddr: string | undefined,
    signal: AbortSignal,
  ): Promise<Uint8Array[]> {
    const size = batchSize(batch);
    const max = this.options.max_batch_messages;
    if (size > max) {
      const err = new Hl7Error(
        "bad_batch",
        `batch of ${size} messages, over the endpoint's max_batch_messages of ${max}`,
        { segment: "BHS" },
      );
      return await this.#unparseable(err, payload, remoteAddr, signal, header, "too_many_messages");
    }
    const acks: { group: number; acks: string[] }[] = [];
    for (const m of batchMessages(batch)) {
      if (signal.aborted) break;
      const bytes = ENCODER.encode(m.text);
      const answer = await this.#one(readHl7Header(m.text), bytes, remoteAddr, signal);
      acks.push({ group: m.group, acks: answer.map((a) => DECODER.decode(a)) });
    }
    return [ENCODER.encode(buildBatchAck(text, batch, acks))];
  }

  /** One readable message: policy, pipeline, record, then its acknowledgements. */
  async #one(
    header: Hl7Header,
    payload: Uint8Array,
    remoteAddr: string | undefined,
    signal: AbortSignal,
  ): Promise<Uint8Array[]> {
    const deps = this.#deps!;
    const env = hl7Envelope(this.config.name, header, payload, remoteAddr, signal);
    const record = new RequestRecord(deps, this.pipeline.name, env.id);
    record.envelope = env;
    let outcome: Outcome;
    if (this.#facilities && !this.#facilities.has(header.sendingFacility)) {
      outcome = {
        verdict: "reject",
        applicationKnown: true,
        errorCode: "hl7_facility_refused",
        error: {
          code: "207",
          segment: "MSH",
          field: 4,
          text: `sending facility ${JSON.stringify(header.sendingFacility)} is not accepted`,
        },
      };
      record.failed(new GatewayError(403, "hl7_facility_refused", outcome.error!.text));
    } else {
      this.#tracker?.acquire();
      try {
        outcome = await this.#run(header, env, record);
      } finally {
        this.#tracker?.release();
      }
    }
    const codes = ackCodes(
      this.options.ack_mode,
      header.acceptAckType,
      header.applicationAckType,
      outcome.verdict,
      outcome.applicationKnown,
    );
    record.hl7Ack = codes.join(",");
    const fields = {
      endpoint: this.config.name,
      message_type: header.messageType,
      trigger_event: header.triggerEvent,
      control_id: header.controlId,
      ack: record.hl7Ack || "none",
    };
    const committed = record.finished(ackStatus(outcome.verdict), "hl7 message", fields);
    if (committed) {
      try {
        await committed;
      } catch (err) {
        // The record was not kept: the message is not acknowledged as accepted.
        const g = toGatewayError(err);
        const error = { code: "207", text: g.message };
        return ackCodes(
          this.options.ack_mode,
          header.acceptAckType,
          header.applicationAckType,
          "error",
        )
          .map((code) => ENCODER.encode(buildAck(header, { code, errors: [error] })));
      }
    }
    return codes.map((code) => {
      if (outcome.passThrough && code === outcome.passThroughCode) {
        return ENCODER.encode(outcome.passThrough);
      }
      return ENCODER.encode(buildAck(header, {
        code,
        errors: outcome.error ? [outcome.error] : undefined,
      }));
    });
  }

  /** Runs the pipeline and reads its outcome. */
  async #run(
    header: Hl7Header,
    env: ReturnType<typeof hl7Envelope>,
    record: RequestRecord,
  ): Promise<Outcome> {
    const deps = this.#deps!;
    let res: ResponseEnvelope;
    try {
      res = await runPipeline(this.pipeline, env, deps);
    } catch (err) {
      const g = toGatewayError(err);
      record.failed(g, { endpoint: this.config.name, control_id: header.controlId }, {
        message: "HL7 message failed",
        level: "warn",
      });
      const relayed = this.#receiverAck(g, header);
      if (relayed) return relayed;
      const verdict: Verdict = g.status >= 400 && g.status < 500 ? "reject" : "error";
      return {
        verdict,
        applicationKnown: true,
        errorCode: g.code,
        error: { code: "207", text: g.message },
      };
    }
    if (res.status >= 400) {
      const text = (await res.body.text().catch(() => "")).slice(0, 200);
      record.errorCode = res.status >= 500 ? "backend_error" : "backend_refused";
      return {
        verdict: res.status >= 500 ? "error" : "reject",
        applicationKnown: true,
        errorCode: record.errorCode,
        error: {
          code: "207",
          text: `backend answered ${res.status}${text ? `: ${text.replace(/[\r\n]+/g, " ")}` : ""}`,
        },
      };
    }
    if (res.headers.has("x-delivery-id")) {
      // Queued: on disk now, delivered later.
      discard(res);
      return { verdict: "accept", applicationKnown: false };
    }
    const primary = this.pipeline.backends.find((b) => b.name === res.backend);
    if (primary?.config.service === "hl7") {
      const text = await res.body.text().catch(() => "");
      try {
        const ack = readAck(text);
        if (ack.controlId === header.controlId && (ack.code === "AA" || ack.code === "CA")) {
          return {
            verdict: "accept",
            applicationKnown: true,
            passThrough: text,
            passThroughCode: ack.code,
          };
        }
      } catch {
        // not an ACK: ours instead
      }
      return { verdict: "accept", applicationKnown: true };
    }
    discard(res);
    return { verdict: "accept", applicationKnown: true };
  }

  /**
   * The primary `hl7` backend's receiver refused this message (`hl7_ack_error`,
   * `hl7_ack_reject`): its own ACK is what the sender gets, when it names this control id.
   */
  #receiverAck(g: GatewayError, header: Hl7Header): Outcome | undefined {
    if (!g.code.startsWith("hl7_ack_")) return undefined;
    const d = g.details as { ack?: unknown; ack_code?: unknown; control_id?: unknown } | undefined;
    if (typeof d?.ack !== "string" || d.control_id !== header.controlId) return undefined;
    const code = String(d.ack_code);
    const verdict: Verdict = code === "AR" || code === "CR" ? "reject" : "error";
    return {
      verdict,
      applicationKnown: true,
      errorCode: g.code,
      passThrough: d.ack,
      passThroughCode: code as AckCode,
      error: { code: "207", text: g.message },
    };
  }

  /**
   * A message that cannot be read: a reject (MSA-2 empty without a readable MSH) naming the
   * problem; the connection is kept.
   */
  async #unparseable(
    err: Hl7Error,
    payload: Uint8Array,
    remoteAddr: string | undefined,
    signal: AbortSignal,
    header?: Hl7Header,
    code: string = err.code,
  ): Promise<Uint8Array[]> {
    const deps = this.#deps!;
    deps.metrics.errorCode(`hl7_${code}`);
    deps.logger.warn("HL7 message unreadable", {
      endpoint: this.config.name,
      remote_addr: remoteAddr,
      code,
      error: err.message,
      ...(header ? { control_id: header.controlId } : {}),
    });
    const codes = header
      ? ackCodes(this.options.ack_mode, header.acceptAckType, header.applicationAckType, "reject")
      : [this.options.ack_mode === "enhanced" ? "CR" as const : "AR" as const];
    // A refused message has its record too (metrics, access log, audit), never its content.
    const record = new RequestRecord(deps, this.pipeline.name, crypto.randomUUID());
    if (header) {
      record.envelope = hl7Envelope(this.config.name, header, payload, remoteAddr, signal);
    } else {
      record.origin = {
        endpoint: this.config.name,
        protocol: "mllp",
        method: "",
        path: "",
        query: "",
        remoteAddr,
      };
    }
    record.errorCode = `hl7_${code}`;
    record.hl7Ack = codes.join(",");
    await record.finished(ackStatus("reject"), "hl7 message", {
      endpoint: this.config.name,
      control_id: header?.controlId,
      ack: record.hl7Ack,
      error_code: record.errorCode,
    })?.catch(() => {});
    return codes.map((code) =>
      ENCODER.encode(buildAck(header, { code, errors: [codecDetail(err)] }))
    );
  }
}
