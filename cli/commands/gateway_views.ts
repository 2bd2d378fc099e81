/** Tables of the management API's answers: `info`, `pipelines`, `routes`. */
import { renderKeyValues, renderTable, type TableOptions } from "../table.ts";
import { formatDuration } from "../time.ts";

type Json = Record<string, unknown>;

const str = (v: unknown, fallback = "-"): string =>
  v === null || v === undefined || v === "" ? fallback : String(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Json => (typeof v === "object" && v !== null ? v as Json : {});

/** The cloud state of an info body: the `cloud` object, or the older `cloud_enabled` flag. */
export function cloudOf(info: Json): Json & { enabled: boolean } {
  const cloud = obj(info.cloud);
  const enabled = typeof cloud.enabled === "boolean" ? cloud.enabled : info.cloud_enabled === true;
  return { ...cloud, enabled };
}

function describeCloud(info: Json): string {
  const c = cloudOf(info);
  if (!c.enabled) return "disabled";
  const parts = ["enabled"];
  if (c.url) parts.push(`url ${c.url}`);
  if (c.gateway_code) parts.push(`code ${c.gateway_code}`);
  if (c.gateway_id) parts.push(`gateway id ${c.gateway_id}`);
  if (typeof c.authorized === "boolean") {
    parts.push(c.authorized ? "authorized" : "not authorized");
  }
  if (c.token_expires_at) parts.push(`token expires ${c.token_expires_at}`);
  if (typeof c.persisted === "boolean") {
    parts.push(c.persisted ? "token persisted" : "token in memory only");
  }
  return parts.join(", ");
}

function describeListener(l: Json): string {
  const http3 = obj(l.http3);
  const quic = l.http3 ? `, HTTP/3 on ${str(http3.bind)}:${str(http3.port)}` : "";
  return `${str(l.network)}: ${str(l.bind)}:${str(l.port)}${l.tls ? " (TLS)" : ""}${quic}`;
}

/** The rows of `gateway:info`. */
export function infoRows(info: Json, where: string): [string, string][] {
  const platform = obj(info.platform);
  const management = obj(info.management);
  const uptime = typeof info.uptime_seconds === "number"
    ? ` (up ${formatDuration(info.uptime_seconds * 1000 + 1)})`
    : "";
  const rows: [string, string][] = [
    ["Instance", where],
    ["Name", str(info.name)],
    ["Version", str(info.version)],
    ["PID", str(info.pid)],
    ["Platform", `${str(platform.os)} ${str(platform.arch)}, Deno ${str(platform.deno)}`],
    ["Started", `${str(info.started_at)}${uptime}`],
    ["Config file", str(info.config_file, "(embedded default)")],
    ["Config generation", str(info.config_generation)],
    ["Cloud", describeCloud(info)],
  ];
  const listeners = list(info.listeners).map((l) => describeListener(obj(l)));
  rows.push(["Listeners", listeners.length ? listeners.join("\n") : "-"]);
  rows.push([
    "Management",
    `${str(management.bind)}:${str(management.port)}, prefix ${str(management.prefix)}`,
  ]);
  return rows;
}

/** `gateway:info` as a table. */
export function renderInfo(info: Json, where: string, options: TableOptions = {}): string {
  return renderKeyValues(infoRows(info, where), options);
}

function describeBackend(b: Json): string {
  const targets = list(b.targets).map((t) => {
    const o = obj(t);
    const health = typeof o.healthy === "boolean"
      ? (o.healthy ? " (healthy)" : " (unhealthy)")
      : "";
    return `  ${str(o.name)} ${str(o.url, "")}${health}`.trimEnd();
  });
  return [`${str(b.name)} [${str(b.service)}]`, ...targets].join("\n");
}

/** The rows of `gateway:pipelines`. */
export function pipelineRows(body: Json): string[][] {
  return list(body.pipelines).map((p) => {
    const o = obj(p);
    return [
      str(o.name),
      list(o.endpoints).map((e) => str(e)).join("\n") || "-",
      list(o.middleware).map((m) => `${str(obj(m).name)} [${str(obj(m).type)}]`).join("\n") ||
      "-",
      list(o.backends).map((b) => describeBackend(obj(b))).join("\n") || "-",
    ];
  });
}

/** `gateway:pipelines` as a table. */
export function renderPipelines(body: Json, options: TableOptions = {}): string {
  return renderTable(
    ["PIPELINE", "ENDPOINTS", "MIDDLEWARE", "BACKENDS"],
    pipelineRows(body),
    options,
  );
}

/** The rows of `gateway:routes`. */
export function routeRows(body: Json): string[][] {
  return list(body.routes).map((r) => {
    const o = obj(r);
    return [
      str(o.path),
      list(o.methods).map((m) => str(m)).join(", ") || "-",
      str(o.endpoint),
      str(o.service),
      str(o.pipeline),
      list(o.networks).map((n) => str(n)).join(", ") || "-",
    ];
  });
}

/** `gateway:routes` as a table. */
export function renderRoutes(body: Json, options: TableOptions = {}): string {
  return renderTable(
    ["PATH", "METHODS", "ENDPOINT", "SERVICE", "PIPELINE", "NETWORKS"],
    routeRows(body),
    options,
  );
}
