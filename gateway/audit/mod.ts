/**
 * The audit trail (`[audit]`, docs/security.md): one record per request that reaches a pipeline,
 * in a SHA-256-chained JSON Lines file (by default durable before the request's answer goes out:
 * group commit) and, optionally, at a FHIR server as R4 `AuditEvent`s and at a syslog collector
 * as RFC 5424 messages over TLS (RFC 5425, `[audit.syslog]`); `verifyAuditFiles` checks a chain
 * and lists the gaps it records, `verifyAuditTrails` the trails of several gateways, each on its
 * own (`gateway audit verify`).
 *
 * @example
 * ```ts
 * import { AuditFile, verifyAuditFiles } from "./mod.ts";
 * import { Logger } from "../../shared/mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const file = await AuditFile.open({
 *   path: `${dir}/audit.jsonl`,
 *   maxFileBytes: 1 << 20,
 *   keepFiles: 0,
 *   logger: new Logger({ level: "error", format: "json" }),
 * });
 * await file.append([{ event: "request", time: new Date().toISOString(), method: "GET", status: 200 }]);
 * await file.close();
 * const report = await verifyAuditFiles([`${dir}/audit.jsonl`]);
 * console.log(report.ok, report.lines[0].endsWith("1 records, seq 1-1, chain intact")); // true true
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
export { AuditFile, type AuditFileOptions } from "./audit_file.ts";
export {
  clusterReportLines,
  type ClusterVerifyReport,
  trailOf,
  type TrailReport,
  verifyAuditTrails,
} from "./cluster_verify.ts";
export {
  type ChainTip,
  GENESIS,
  lineHash,
  readChain,
  verifyAuditFiles,
  type VerifyReport,
} from "./chain.ts";
export {
  apiKeyQueryParams,
  type AuditEntry,
  BUILT_IN_REDACTED_QUERY,
  entryOf,
  REDACTED_VALUE,
  redactedQueryNames,
  redactQuery,
} from "./entry.ts";
export { auditEventOf, batchBundle, type FhirResource } from "./fhir_event.ts";
export { markerPath } from "./run_marker.ts";
export { SYSLOG_COMPONENT, SyslogSink, type SyslogSinkDeps } from "./syslog_sink.ts";
export { octetCounted, SD_ID, syslogMessage } from "./syslog_message.ts";
export { AuditTrail, type AuditTrailDeps, type FhirDelivery } from "./trail.ts";
export { auditUnavailable } from "./unavailable.ts";
