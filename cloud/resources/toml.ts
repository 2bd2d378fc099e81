/**
 * Gateway configuration from the team's records: the pipelines of a gateway (or one pipeline) with
 * the endpoints, middleware, backends, networks and transforms they use, turned into the raw TOML
 * tables, validated by the gateway's own validator (`shared/gateway_config`) and written with its
 * TOML writer. The output is exactly what the gateway's loader accepts, or a list of problems.
 */
import {
  type ConfigProblem,
  validateConfig,
  writeConfigToml,
} from "../../shared/gateway_config/mod.ts";
import { sha256Hex } from "../store/mod.ts";
import type {
  BackendRecord,
  EndpointRecord,
  MiddlewareRecord,
  NetworkRecord,
  PipelineRecord,
  RecordOf,
  ResourceKind,
  TransformRecord,
} from "../store/mod.ts";

/** Directory of transform files in the generated configuration. */
export const TRANSFORMS_PATH = "transforms";

/** Reads a team's records (with candidate changes applied, when validating a write). */
export interface ConfigSources {
  get<K extends ResourceKind>(kind: K, id: string): Promise<RecordOf[K] | null>;
  /** Pipelines placed on a gateway. */
  pipelinesOf(gatewayId: string): Promise<PipelineRecord[]>;
}

/** A transform the configuration needs, and where the gateway saves it. */
export interface NeededTransform {
  id: string;
  name: string;
  /** File name under `transforms_path` (`<id>.json`), as in the middleware's `spec_path`. */
  file: string;
  sha256: string;
}

/** The outcome of generating a configuration. */
export interface GeneratedConfig {
  /** The TOML text; null when `problems` is not empty. */
  toml: string | null;
  problems: ConfigProblem[];
  /** Hash of the TOML and of every needed transform: it changes when the gateway must act. */
  sha256: string;
  transforms: NeededTransform[];
  /** Names of the pipelines in the file. */
  pipelines: string[];
  /** Pipelines left out because they are not complete yet. */
  skipped: { pipeline: string; reason: string }[];
}

/** The transform file name of transform `id`. */
export function transformFile(id: string): string {
  return `${id}.json`;
}

/** The text the gateway downloads for a transform (and hashes). */
export function transformText(spec: unknown): string {
  return `${JSON.stringify(spec, null, 2)}\n`;
}

/** Name of the `[targets.*]` entry of a backend's target. */
export function targetName(backend: string, target: string): string {
  return `${backend}_${target}`;
}

/** The configuration of gateway `gatewayId`: every complete pipeline placed on it. */
export async function generateGatewayConfig(
  src: ConfigSources,
  gatewayId: string,
  baseUrl: string,
): Promise<GeneratedConfig> {
  const pipelines = (await src.pipelinesOf(gatewayId)).sort((a, b) => a.name.localeCompare(b.name));
  return await generate(src, pipelines, baseUrl);
}

/** The configuration of one pipeline on its own (for review). */
export async function generatePipelineConfig(
  src: ConfigSources,
  pipeline: PipelineRecord,
  baseUrl: string,
): Promise<GeneratedConfig> {
  return await generate(src, [pipeline], baseUrl);
}

type Table = Record<string, unknown>;

async function generate(
  src: ConfigSources,
  pipelines: PipelineRecord[],
  baseUrl: string,
): Promise<GeneratedConfig> {
  const raw = {
    transforms_path: TRANSFORMS_PATH,
    cloud: { enabled: true, url: baseUrl },
    endpoints: {} as Table,
    backends: {} as Table,
    targets: {} as Table,
    middleware: {} as Table,
    pipelines: {} as Table,
  };
  const networks: Record<string, NetworkRecord> = {};
  const transforms = new Map<string, TransformRecord>();
  const problems: ConfigProblem[] = [];
  const skipped: GeneratedConfig["skipped"] = [];
  const included: string[] = [];
  const missing = (what: string, id: string, p: PipelineRecord) =>
    skipped.push({ pipeline: p.name, reason: `${what} ${id} no longer exists` });

  for (const p of pipelines) {
    if (!p.endpoint_ids.length || !p.backend_ids.length) {
      skipped.push({
        pipeline: p.name,
        reason: !p.endpoint_ids.length ? "it has no endpoint yet" : "it has no backend yet",
      });
      continue;
    }
    const endpoints = await fetchAll(src, "endpoints", p.endpoint_ids);
    const middleware = await fetchAll(src, "middleware", p.middleware_ids);
    const backends = await fetchAll(src, "backends", p.backend_ids);
    const gone = endpoints.missing ?? middleware.missing ?? backends.missing;
    if (gone) {
      missing(gone.kind, gone.id, p);
      continue;
    }
    for (const e of endpoints.records) await addEndpoint(src, raw.endpoints, networks, e);
    for (const m of middleware.records) await addMiddleware(src, raw.middleware, transforms, m);
    for (const b of backends.records) addBackend(raw.backends, raw.targets, b);
    raw.pipelines[p.name] = {
      endpoints: endpoints.records.map((r) => r.name),
      middleware: middleware.records.map((r) => r.name),
      backends: backends.records.map((r) => r.name),
    };
    included.push(p.name);
  }
  const withNetworks: Table = Object.keys(networks).length
    ? {
      ...raw,
      network: Object.fromEntries(Object.values(networks).map((n) => [n.name, networkTable(n)])),
    }
    : raw;
  const result = validateConfig(withNetworks, new Map(), "gateway.toml");
  problems.push(...result.problems);
  const needed = [...transforms.values()]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((t) => ({ id: t.id, name: t.name, file: transformFile(t.id), sha256: t.sha256 }));
  const toml = result.config ? writeConfigToml(result.config, { selfContained: true }) : null;
  const sha256 = await sha256Hex(
    [toml ?? JSON.stringify(problems), ...needed.map((t) => `${t.id}:${t.sha256}`)].join("\n"),
  );
  return { toml, problems, sha256, transforms: needed, pipelines: included, skipped };
}

async function fetchAll<K extends "endpoints" | "middleware" | "backends">(
  src: ConfigSources,
  kind: K,
  ids: string[],
): Promise<{ records: RecordOf[K][]; missing?: { kind: string; id: string } }> {
  const records: RecordOf[K][] = [];
  for (const id of ids) {
    const r = await src.get(kind, id);
    if (!r) return { records, missing: { kind, id } };
    records.push(r);
  }
  return { records };
}

async function addEndpoint(
  src: ConfigSources,
  into: Table,
  networks: Record<string, NetworkRecord>,
  e: EndpointRecord,
): Promise<void> {
  const names: string[] = [];
  for (const id of e.network_ids) {
    const n = await src.get("networks", id);
    if (!n) continue;
    networks[n.id] = n;
    names.push(n.name);
  }
  into[e.name] = {
    service: e.type,
    options: e.options,
    ...(names.length ? { networks: names } : {}),
  };
}

async function addMiddleware(
  src: ConfigSources,
  into: Table,
  transforms: Map<string, TransformRecord>,
  m: MiddlewareRecord,
): Promise<void> {
  const options: Table = { ...m.options };
  if (m.transform_id) {
    const t = await src.get("transforms", m.transform_id);
    if (t) transforms.set(t.id, t);
    options.spec_path = transformFile(m.transform_id);
  }
  into[m.name] = { type: m.type, options };
}

/** The `[backends.<name>]` table (and its targets) of a backend record. */
export function backendTable(b: BackendRecord): { backend: Table; targets: Table } {
  const targets: Table = {};
  for (const t of b.targets) targets[targetName(b.name, t.name)] = { url: t.url };
  const backend: Table = { service: b.type, options: b.options };
  if (b.targets.length) backend.targets = Object.keys(targets);
  for (const key of ["timeout_secs", "retries", "load_balancing", "required", "match"] as const) {
    if (b[key] !== null && b[key] !== undefined) backend[key] = b[key];
  }
  return { backend, targets };
}

function addBackend(into: Table, targetsInto: Table, b: BackendRecord): void {
  const { backend, targets } = backendTable(b);
  into[b.name] = backend;
  Object.assign(targetsInto, targets);
}

/** The `[network.<name>]` table of a network record. */
export function networkTable(n: NetworkRecord): Table {
  const out: Table = { bind: n.bind, port: n.port };
  if (n.tls_cert_path !== null) out.tls_cert_path = n.tls_cert_path;
  if (n.tls_key_path !== null) out.tls_key_path = n.tls_key_path;
  if (n.http3) {
    out.http3 = Object.fromEntries(Object.entries(n.http3).filter(([, v]) => v !== null));
  }
  return out;
}
