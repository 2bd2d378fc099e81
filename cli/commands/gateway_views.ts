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

/** The cloud rows of `gateway:info`: one when disabled, the token and sync state when enabled. */
function cloudRows(info: Json): [string, string][] {
  const c = cloudOf(info);
  if (!c.enabled) return [["Cloud", "disabled"]];
  const rows: [string, string][] = [["Cloud", `enabled${c.url ? `, ${c.url}` : ""}`]];
  if (c.gateway_code) rows.push(["Gateway code", str(c.gateway_code)]);
  if (c.gateway_id) rows.push(["Gateway id", str(c.gateway_id)]);
  if (typeof c.authorized === "boolean") {
    const token = c.authorized
      ? [
        c.verified === false ? "held, not verified yet" : "held",
        c.token_expires_at ? `expires ${c.token_expires_at}` : "",
        c.persisted === true ? "persisted (encrypted)" : "in memory only",
        c.token_source ? `from ${c.token_source}` : "",
      ].filter((p) => p !== "").join(", ")
      : "none (run gwcli gateway:authorize)";
    rows.push(["Machine token", token]);
    if (c.authorized && c.token_renews_at) rows.push(["Token renewal", str(c.token_renews_at)]);
  }
  const sync = obj(c.sync);
  if (typeof sync.state === "string") {
    const parts = [sync.state as string];
    if (sync.config_version !== null && sync.config_version !== undefined) {
      parts.push(`config version ${sync.config_version}`);
    }
    if (sync.last_pull_at) parts.push(`last pull ${sync.last_pull_at}`);
    rows.push(["Sync", parts.join(", ")]);
    const error = obj(sync.last_error);
    if (error.message) rows.push(["Last cloud error", `${str(error.at)}: ${str(error.message)}`]);
  }
  return rows;
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
    ...cloudRows(info),
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
