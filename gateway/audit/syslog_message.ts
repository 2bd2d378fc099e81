/**
 * Audit records as RFC 5424 syslog messages: `<PRI>1 TIME HOST APP PROCID MSGID [SD] BOM MSG`.
 * The structured data element `gateway@32473` carries the fields a collector filters on (event,
 * outcome, status, pipeline, method, request id, node); MSG is the record itself as JSON (what the
 * trail file holds, metadata only). Framing for stream transports is RFC 5425's octet counting
 * (`LEN SP MSG`).
 */
import type { AuditEntry } from "./entry.ts";

/** The SD-ID of the gateway's structured data (32473: the example enterprise number, RFC 5612). */
export const SD_ID = "gateway@32473";
/** Longest string value of a record in a message: rsyslog takes 8 KiB messages by default. */
const MAX_VALUE_CHARS = 1024;
/** Syslog severities (RFC 5424 6.2.1). */
const WARNING = 4;
const NOTICE = 5;
const INFORMATIONAL = 6;

/** Fixed parts of every message of one sink. */
export interface SyslogHeader {
  /** Facility number (0-23). */
  facility: number;
  /** HOSTNAME (printable ASCII, no spaces). */
  hostname: string;
  /** APP-NAME. */
  appName: string;
  /** PROCID: the gateway's process id. */
  procId: string;
}

/** Severity of a record: warning for lost records, notice for refusals and errors, else info. */
function severityOf(entry: AuditEntry): number {
  if (entry.event === "audit.dropped" || entry.event === "audit.gap") return WARNING;
  if (entry.outcome === "failure" || entry.outcome === "error") return NOTICE;
  return INFORMATIONAL;
}

/** An SD-PARAM value with `"`, `\` and `]` escaped (RFC 5424 6.3.3). */
function paramValue(value: string): string {
  return value.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** A header field: printable ASCII without spaces, at most `max` characters, `-` when empty. */
function headerField(value: string | undefined, max: number): string {
  const clean = (value ?? "").replace(/[^\x21-\x7e]/g, "_").slice(0, max);
  return clean === "" ? "-" : clean;
}

/** The record with long strings cut (the message stays within a collector's limits). */
function bounded(entry: AuditEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    out[key] = typeof value === "string" && value.length > MAX_VALUE_CHARS
      ? `${value.slice(0, MAX_VALUE_CHARS)}…`
      : value;
  }
  return out;
}

/** The RFC 5424 message of `entry` (without framing). */
export function syslogMessage(entry: AuditEntry, header: SyslogHeader, node: string): string {
  const pri = header.facility * 8 + severityOf(entry);
  const params: [string, unknown][] = [
    ["event", entry.event],
    ["node", node],
    ["outcome", entry.outcome],
    ["status", entry.status],
    ["pipeline", entry.pipeline],
    ["method", entry.method],
    ["request_id", entry.request_id],
    ["error_code", entry.error_code],
  ];
  const sd = params
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${k}="${paramValue(String(v).slice(0, 256))}"`)
    .join(" ");
  const time = Number.isNaN(Date.parse(entry.time)) ? new Date().toISOString() : entry.time;
  return `<${pri}>1 ${time} ${headerField(header.hostname, 255)} ` +
    `${headerField(header.appName, 48)} ${headerField(header.procId, 128)} ` +
    `${headerField(entry.event, 32)} [${SD_ID} ${sd}] \uFEFF${JSON.stringify(bounded(entry))}`;
}

const encoder = new TextEncoder();

/** One message framed for TLS/TCP (RFC 5425 4.3: octet counting). */
export function octetCounted(message: string): Uint8Array {
  const body = encoder.encode(message);
  const head = encoder.encode(`${body.length} `);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}
