/**
 * `[audit.syslog]`: the audit trail's syslog sink (docs/security.md): every record as an RFC 5424
 * message to a central collector (an IHE ATNA audit record repository), over TLS as RFC 5425 says
 * (octet-counting framing), or plain TCP (same framing) or UDP (RFC 5426) on trusted networks.
 */
import { z } from "zod";
import { field, type TableSpec } from "../fields.ts";
import type { AuditSyslogConfig, ConfigProblem } from "../types.ts";
import { hostName, int, port, text } from "../values.ts";

/** Transports of the syslog sink. */
export const SYSLOG_TRANSPORTS = [
  "tls",
  "tcp",
  "udp",
] as const satisfies readonly AuditSyslogConfig[
  "transport"
][];

/** Syslog facilities by name (RFC 5424 6.2.1). */
export const SYSLOG_FACILITIES: Readonly<Record<string, number>> = {
  kern: 0,
  user: 1,
  mail: 2,
  daemon: 3,
  auth: 4,
  syslog: 5,
  lpr: 6,
  news: 7,
  uucp: 8,
  cron: 9,
  authpriv: 10,
  ftp: 11,
  ntp: 12,
  audit: 13,
  alert: 14,
  clock: 15,
  local0: 16,
  local1: 17,
  local2: 18,
  local3: 19,
  local4: 20,
  local5: 21,
  local6: 22,
  local7: 23,
};

/** RFC 5424 APP-NAME / HOSTNAME: printable US-ASCII without spaces. */
const printable = (max: number) =>
  z.string().min(1).max(max).regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces");

/** The keys of `[audit.syslog]`. */
export const AUDIT_SYSLOG: TableSpec = {
  host: field(
    "string",
    z.union([hostName(), z.ipv4(), z.ipv6()]),
    "The collector (an IHE ATNA audit record repository, rsyslog, syslog-ng).",
    { required: true, example: "audit.hospital.internal" },
  ),
  port: field("integer", port(), "The collector's port.", {
    defaultDoc: "6514 for `tls`, 514 for `tcp` and `udp`",
    example: 6514,
  }),
  transport: field(
    "string",
    z.enum(SYSLOG_TRANSPORTS),
    "`tls`: RFC 5425 (TLS, octet-counting framing), as IHE ATNA requires. `tcp`: the same " +
      "framing without TLS. `udp`: RFC 5426, one message per datagram (may be lost unseen): " +
      "trusted networks only.",
    { default: "tls", example: "tls" },
  ),
  ca_path: field(
    "string",
    text(),
    "PEM CA certificates the collector's certificate must chain to; the system's CAs otherwise.",
    { path: "config", example: "/etc/gateway/audit-ca.pem" },
  ),
  cert_path: field(
    "string",
    text(),
    "PEM client certificate presented to the collector (mutual TLS, as ATNA's secure node).",
    { path: "config", example: "/etc/gateway/audit-client.pem" },
  ),
  key_path: field("string", text(), "PEM private key of `cert_path`.", {
    path: "config",
    example: "/etc/gateway/audit-client-key.pem",
  }),
  app_name: field("string", printable(48), "RFC 5424 APP-NAME of the messages.", {
    default: "healthcare-gateway",
    example: "gw-edge",
  }),
  facility: field(
    "string",
    z.enum(Object.keys(SYSLOG_FACILITIES) as [string, ...string[]]),
    "Syslog facility: `authpriv` (10) or `audit` (13) as ATNA suggests, or another.",
    { default: "authpriv", example: "audit" },
  ),
  hostname: field("string", printable(255), "RFC 5424 HOSTNAME of the messages.", {
    defaultDoc: "`[audit] source_name`, else the host name",
    example: "edge-gateway-1",
  }),
  queue_size: field(
    "integer",
    int(1, 1_000_000),
    "Records held in memory while the collector cannot be reached; beyond it records are " +
      'dropped for this sink (counted in `gateway_audit_dropped_total{sink="syslog"}`), never ' +
      "blocking requests. The trail file keeps them all.",
    { default: 10_000, example: 100_000 },
  ),
  connect_timeout_ms: field(
    "integer",
    int(100, 60_000),
    "Longest wait for a connection (and TLS handshake) to the collector.",
    { default: 5_000, example: 2_000 },
  ),
};

/** Cross-key checks of `[audit.syslog]` (after each key's own). */
export function syslogProblems(
  s: Partial<AuditSyslogConfig>,
  path: string,
): Pick<ConfigProblem, "path" | "message">[] {
  const problems: Pick<ConfigProblem, "path" | "message">[] = [];
  if ((s.cert_path === undefined) !== (s.key_path === undefined)) {
    const missing = s.cert_path === undefined ? "cert_path" : "key_path";
    problems.push({
      path: `${path}.${missing}`,
      message: `missing \`${missing}\`: set both cert_path and key_path, or neither`,
    });
  }
  if (s.transport !== "tls") {
    for (const key of ["ca_path", "cert_path"] as const) {
      if (s[key] !== undefined) {
        problems.push({
          path: `${path}.${key}`,
          message: `\`${key}\` needs transport = "tls"`,
        });
      }
    }
  }
  return problems;
}
