/**
 * The front door every request passes, whatever its protocol (HTTP/1.1 and h2, HTTP/3, a DIMSE
 * operation): its request id, the metrics of its pipeline, the log line of a failure and the
 * access log line at its end, written in one place so that a new listener gets them right by
 * calling this. The listener keeps what is its own: routing, and the shape of its answers.
 */
import type { Logger } from "../../shared/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { type GatewayError, toGatewayError } from "../errors.ts";
import type { Metrics } from "../observability/mod.ts";
import { requestFeed } from "./request_feed.ts";

/** What a client may send as X-Request-Id to have it used (and echoed) as ours. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id: the client's `X-Request-Id` when it is a sane token, else a new UUID. */
export function requestIdOf(incoming: string | null | undefined): string {
  return incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/** Where the audit record of a finished request goes (the audit trail, gateway/audit). */
export interface AuditSink {
  /** False when no `[audit]` is configured: records then cost nothing. */
  readonly enabled: boolean;
  /**
   * One request (or DIMSE operation) ended with `status` after `seconds`. Returns the promise of
   * its record's commit when the answer must wait for it (`durability = "sync"`), rejected with
   * the error to answer instead when the record was not kept; else undefined.
   */
  requestFinished(
    record: RequestRecord,
    status: number,
    seconds: number,
  ): Promise<void> | undefined;
}

/** What an HTTP listener knows of a request before any endpoint has made an envelope of it. */
export interface RequestOrigin {
  endpoint: string;
  protocol: string;
  method: string;
  /** The path as received (prefix included). */
  path: string;
  /** `?…` as received, or empty. */
  query: string;
  remoteAddr?: string;
}

/** Where the front door writes. */
export interface FrontDoorDeps {
  metrics: Metrics;
  logger: Logger;
  /** The audit trail, when the gateway keeps one. */
  audit?: AuditSink;
}

/** How a failure is logged: its line's message and level, and whether it is logged at all. */
export interface FailureOptions {
  message?: string;
  level?: "error" | "warn";
  /** Default: a 5xx is logged (a failure of ours or of a backend), a 4xx is only counted. */
  logged?: boolean;
}

/** Counts a failure by its code and logs it (see RequestRecord.failed). */
function reportFailure(
  deps: FrontDoorDeps,
  requestId: string,
  pipeline: string,
  g: GatewayError,
  fields: Record<string, unknown>,
  options: FailureOptions,
): void {
  deps.metrics.errorCode(g.code);
  // The console's "last error" of the pipeline (failures only: nothing on the success path).
  requestFeed.failed({
    pipeline,
    at: new Date().toISOString(),
    status: g.status,
    code: g.code,
    message: g.message,
    request_id: requestId,
  });
  if (!(options.logged ?? g.status >= 500)) return;
  deps.logger[options.level ?? "error"](options.message ?? "request failed", {
    request_id: requestId,
    pipeline,
    ...fields,
    code: g.code,
    error: g.internal ?? g.message,
  });
}

/** Milliseconds with two decimals, as the access log writes durations. */
function millis(seconds: number): number {
  return Math.round(seconds * 100000) / 100;
}

/**
 * An object that makes an access log line's fields when the line is written: a listener's own
 * per-request object can be one, so a request needs no closure for its log line.
 */
export abstract class LogFieldSource {
  abstract logFields(): Record<string, unknown>;
}

/**
 * The fields of an access log line, or a function or {@link LogFieldSource} that makes them when
 * the line is written.
 */
export type LogFields =
  | Record<string, unknown>
  | (() => Record<string, unknown>)
  | LogFieldSource;

function fieldsOf(given: LogFields): Record<string, unknown> {
  if (typeof given === "function") return given();
  if (given instanceof LogFieldSource) return given.logFields();
  return given;
}

/** One request (or DIMSE operation) through a pipeline, from its arrival to its log line. */
export class RequestRecord {
  readonly #deps: FrontDoorDeps;
  readonly #started = performance.now();
  #finished = false;
  /** The code of the failure the request ended with, if any (for the access log). */
  errorCode?: string;
  /** The request as it arrived (set by the listener while an audit trail is kept). */
  origin?: RequestOrigin;
  /** The envelope, once the endpoint made it: the audit trail reads identity and DICOM ids there. */
  envelope?: RequestEnvelope;
  /** The DIMSE status sent, for a DIMSE operation. */
  dimseStatus?: number;
  /** The acknowledgement code sent (`AA`, `CA`, `AE`, `AR`…), for an HL7 v2 message. */
  hl7Ack?: string;

  /** Starts the record: counts the request as in flight on `pipeline`. */
  constructor(deps: FrontDoorDeps, readonly pipeline: string, readonly requestId: string) {
    this.#deps = deps;
    deps.metrics.requestStarted(pipeline);
  }

  /**
   * A failure: counted by its code; a failure of ours (`logged`: by default a 5xx) is logged with
   * its internal detail under `message`, never sent to the client.
   */
  failed(
    g: GatewayError,
    fields: Record<string, unknown> = {},
    options: FailureOptions = {},
  ): void {
    this.errorCode = g.code;
    reportFailure(this.#deps, this.requestId, this.pipeline, g, fields, options);
  }

  /**
   * {@link failed} for a failure after the request has ended (a streamed answer that breaks off),
   * holding only the request's id and pipeline: not the record, whose envelope may hold a body.
   */
  lateFailure(): (
    g: GatewayError,
    fields?: Record<string, unknown>,
    options?: FailureOptions,
  ) => void {
    const deps = this.#deps;
    const { requestId, pipeline } = this;
    return (g, fields = {}, options = {}) =>
      reportFailure(deps, requestId, pipeline, g, fields, options);
  }

  /**
   * The end (once; later calls do nothing): the audit record is made, the duration and `status`
   * go to the pipeline's metrics, and `fields` to the access log line `message` with the request
   * id and duration. When the answer must wait for its audit record, returns the promise of that
   * (metrics and log follow it); it rejects with the error to answer instead (503
   * `audit_unavailable`) when the record was not kept, which is then what metrics and log say.
   * `fields` may be a function that makes them: called only when the line is written or the
   * console's live tail watches (a gateway logging at `warn` makes no fields per request).
   */
  finished(
    status: number,
    message: string,
    fields: LogFields,
  ): Promise<void> | undefined {
    if (this.#finished) return undefined;
    this.#finished = true;
    const seconds = (performance.now() - this.#started) / 1000;
    const committed = this.#deps.audit?.enabled
      ? this.#deps.audit.requestFinished(this, status, seconds)
      : undefined;
    if (!committed) {
      this.#ended(status, seconds, message, fields);
      return undefined;
    }
    return committed.then(
      () => this.#ended(status, seconds, message, fields),
      (err) => {
        const g = toGatewayError(err);
        this.failed(g, {}, { message: "answer withheld: its audit record was not kept" });
        this.#ended(g.status, seconds, message, {
          ...fieldsOf(fields),
          status: g.status,
          error_code: g.code,
        });
        throw g;
      },
    );
  }

  /** Metrics and the access log line of the answer the client gets. */
  #ended(status: number, seconds: number, message: string, given: LogFields): void {
    this.#deps.metrics.requestFinished(this.pipeline, status, seconds);
    const watched = requestFeed.watched;
    const logged = this.#deps.logger.enabled("info");
    if (!watched && !logged) return;
    const fields = fieldsOf(given);
    // The console's live tail: one property read while nobody watches.
    if (watched) {
      requestFeed.finished(
        this.requestId,
        this.pipeline,
        status,
        millis(seconds),
        this.errorCode,
        fields,
      );
    }
    if (!logged) return;
    this.#deps.logger.info(message, {
      request_id: this.requestId,
      ...fields,
      duration_ms: millis(seconds),
    });
  }
}
