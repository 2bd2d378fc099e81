/**
 * One audit record: who did what to which data, through which pipeline, and how it ended. Built
 * from what the front door knows of a finished request (its origin, its envelope after the
 * middleware ran, its status). Never a body, a header value, a credential or a redacted query
 * value: the record names the request, it does not copy it.
 */
import { AUTH_METADATA, fhirRequest } from "../middleware/mod.ts";
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestRecord } from "../pipeline/mod.ts";

/** An audit record as written (one JSON line; `seq` and `prev` are added by the file sink). */
export interface AuditEntry {
  /**
   * `request`; `audit.dropped` for the note of records lost before it; `audit.gap` for an unclean
   * stop of the gateway found at the next start (run_marker.ts).
   */
  event:
    | "request"
    | "audit.dropped"
    | "audit.gap"
    | "tracking.content_viewed"
    | "tracking.replayed"
    | "tracking.resent"
    | "queue.dead_letter_viewed"
    | "queue.dead_letter_resent"
    | "management.refused";
  /**
   * For `tracking.*` and `queue.*` events: the management token that acted (its name and role),
   * the tracked message (or dead letter) concerned, the backend a replay was limited to, and for
   * an edited resend the new body's SHA-256 and size (never the body); for a dead letter sent
   * again, the new message's delivery id.
   */
  actor?: string;
  actor_role?: string;
  message_id?: string;
  backend?: string;
  edited_sha256?: string;
  edited_bytes?: number;
  new_delivery_id?: string;
  /** When the request ended (ISO 8601, UTC). */
  time: string;
  request_id?: string;
  pipeline?: string;
  endpoint?: string;
  /** `http`, `h2`, `h3`, `dimse` or `mllp`. */
  protocol?: string;
  /** The peer's address (the socket's; `client_ip` when a trusted proxy named another). */
  client_address?: string;
  client_ip?: string;
  subject?: string;
  client_id?: string;
  auth_method?: string;
  /** HTTP method, the DIMSE operation (`C-STORE`), or an HL7 message's type (`ADT^A01`). */
  method?: string;
  /** The path as received, for HTTP. */
  path?: string;
  /** The query as received (`?…`), sensitive values redacted. */
  query?: string;
  fhir_interaction?: string;
  fhir_resource_type?: string;
  fhir_id?: string;
  dicom_calling_aet?: string;
  dicom_called_aet?: string;
  dicom_sop_class?: string;
  dicom_sop_instance?: string;
  dicom_study_uid?: string;
  /** HL7 v2 (MSH-9, MSH-10, MSH-4): the message's type, trigger event, control id, facility. */
  hl7_message_type?: string;
  hl7_trigger_event?: string;
  hl7_control_id?: string;
  hl7_sending_facility?: string;
  /** The HL7 acknowledgement code sent (`AA`, `AE`, `AR`, `CA`, `CE`, `CR`). */
  hl7_ack_code?: string;
  /**
   * The HTTP status answered (for DIMSE: 200, or 502 when the DIMSE status is a failure; for
   * HL7: 200 for `AA`/`CA`, 400 for `AR`/`CR`, 502 for `AE`/`CE`).
   */
  status?: number;
  /** The DIMSE status sent, as `0x0000`. */
  dicom_status?: string;
  /** `success` (< 400), `failure` (4xx: refused) or `error` (5xx: ours or the backend's). */
  outcome?: "success" | "failure" | "error";
  error_code?: string;
  duration_ms?: number;
  /** For `audit.dropped`: how many records were lost, and why (`audit.gap`: `unclean_stop`). */
  dropped?: number;
  reason?: string;
  /** For `audit.gap`: the last record written before the stop. */
  last_seq?: number;
  /** For `audit.gap`: the stop came after this (the stopped run's last write or its start). */
  stopped_after?: string;
  /** For `audit.gap`: the process id and start of the run that stopped. */
  run_pid?: number;
  run_started?: string;
  /** For `audit.gap`: the stopped run's durability (`sync`: no answered request is missing). */
  durability?: "sync" | "batched";
}

/** Query parameters whose values never reach the trail. */
export const BUILT_IN_REDACTED_QUERY: readonly string[] = [
  "access_token",
  "api_key",
  "apikey",
  "client_secret",
  "code",
  "key",
  "password",
  "secret",
  "token",
];

/** The replacement of a redacted query value. */
export const REDACTED_VALUE = "[redacted]";

/**
 * `query` (`?…`) with the values of `redacted` parameters (lower-case names) replaced; the rest
 * kept byte for byte, so the record shows what the upstream was asked.
 */
export function redactQuery(query: string, redacted: ReadonlySet<string>): string {
  if (query.length <= 1) return "";
  const parts = query.slice(1).split("&");
  for (let i = 0; i < parts.length; i++) {
    const eq = parts[i].indexOf("=");
    if (eq < 0) continue;
    let name: string;
    try {
      name = decodeURIComponent(parts[i].slice(0, eq).replaceAll("+", " "));
    } catch {
      name = parts[i].slice(0, eq);
    }
    // `token:exact`-style modifiers (FHIR search) name the same parameter.
    const bare = name.split(":")[0].toLowerCase();
    if (redacted.has(bare)) parts[i] = `${parts[i].slice(0, eq)}=${REDACTED_VALUE}`;
  }
  return "?" + parts.join("&");
}

/** A FHIR id in a path: what the FHIR spec allows, so nothing else is recorded as one. */
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;

/** The FHIR facts of a request to a `fhir` endpoint (path relative to its prefix). */
function fhirFacts(method: string, path: string, entry: AuditEntry): void {
  const request = fhirRequest(method, path);
  if (!request) return;
  entry.fhir_interaction = request.interaction;
  if (request.resourceType) entry.fhir_resource_type = request.resourceType;
  const segments = path.split("/").filter((s) => s !== "");
  if (request.resourceType && segments.length >= 2 && FHIR_ID.test(segments[1])) {
    entry.fhir_id = segments[1];
  }
}

/** Milliseconds with two decimals. */
function millis(seconds: number): number {
  return Math.round(seconds * 100000) / 100;
}

/** Sets `key` when `value` is a non-empty string. */
function put<K extends keyof AuditEntry>(entry: AuditEntry, key: K, value: unknown): void {
  if (typeof value === "string" && value !== "") (entry[key] as unknown) = value;
}

/** The audit record of a finished request. */
export function entryOf(
  record: RequestRecord,
  status: number,
  seconds: number,
  redacted: ReadonlySet<string>,
): AuditEntry {
  const env = record.envelope;
  const origin = record.origin;
  const entry: AuditEntry = {
    event: "request",
    time: new Date().toISOString(),
    request_id: record.requestId,
    pipeline: record.pipeline,
  };
  put(entry, "endpoint", env?.endpoint ?? origin?.endpoint);
  put(entry, "protocol", env?.protocol ?? origin?.protocol);
  put(entry, "client_address", env?.remoteAddr ?? origin?.remoteAddr);
  const m = env?.metadata;
  if (m) {
    if (m["client.ip"] !== entry.client_address) put(entry, "client_ip", m["client.ip"]);
    put(entry, "subject", m[AUTH_METADATA.subject]);
    put(entry, "client_id", m[AUTH_METADATA.clientId]);
    put(entry, "auth_method", m[AUTH_METADATA.method]);
  }
  if (env?.protocol === "dimse" && m) {
    put(entry, "method", m.dicom_operation);
    put(entry, "dicom_calling_aet", m.calling_aet);
    put(entry, "dicom_called_aet", m.called_aet);
    put(entry, "dicom_sop_class", m.dicom_sop_class);
    put(entry, "dicom_sop_instance", m.dicom_instance_uid);
    put(entry, "dicom_study_uid", m.dicom_study_uid);
  } else if (env?.protocol === "mllp" && m) {
    const type = m["hl7.message_type"];
    const trigger = m["hl7.trigger_event"];
    put(entry, "method", trigger ? `${type}^${trigger}` : type);
    put(entry, "hl7_message_type", type);
    put(entry, "hl7_trigger_event", trigger);
    put(entry, "hl7_control_id", m["hl7.control_id"]);
    put(entry, "hl7_sending_facility", m["hl7.sending_facility"]);
  } else {
    put(entry, "method", origin?.method ?? env?.method);
    put(entry, "path", origin?.path ?? env?.originalPath);
    const query = origin?.query ?? env?.queryString() ?? "";
    put(entry, "query", redactQuery(query, redacted));
    if (env && m?.service === "fhir") fhirFacts(origin?.method ?? env.method, env.path, entry);
  }
  entry.status = status;
  if (record.dimseStatus !== undefined) {
    entry.dicom_status = `0x${record.dimseStatus.toString(16).padStart(4, "0")}`;
  }
  put(entry, "hl7_ack_code", record.hl7Ack);
  entry.outcome = status < 400 ? "success" : status < 500 ? "failure" : "error";
  put(entry, "error_code", record.errorCode);
  entry.duration_ms = millis(seconds);
  return entry;
}

/**
 * Query parameters an `api_key` middleware of `config` reads keys from: their values stay out of
 * the trail like the built-in and `redact_query` ones.
 */
export function apiKeyQueryParams(config: GatewayConfig): string[] {
  return Object.values(config.middleware)
    .filter((m) => m.type === "api_key" && typeof m.options.query_param === "string")
    .map((m) => m.options.query_param as string);
}

/** Every query parameter whose value an audit record of `config` leaves out, lowercase. */
export function redactedQueryNames(config: GatewayConfig): string[] {
  return [
    ...BUILT_IN_REDACTED_QUERY,
    ...[...(config.audit?.redact_query ?? []), ...apiKeyQueryParams(config)]
      .map((n) => n.toLowerCase()),
  ];
}
