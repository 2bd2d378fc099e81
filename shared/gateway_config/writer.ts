/**
 * GatewayConfig -> TOML text: sections in a fixed order, keys in schema order, values equal to
 * their default left out. Parsing and validating the output gives back an equal GatewayConfig.
 * Strings are written verbatim, so a `${VAR}` in a value is substituted when the gateway loads
 * the file (the cloud may store placeholders for secrets this way).
 */
import { AUDIT_SYSLOG } from "./components/mod.ts";
import { MANAGEMENT_TOKEN, PIPELINE_TRACKING, TRACKING } from "./components/mod.ts";
import { stringify } from "smol-toml";
import { alertsTables } from "./components/mod.ts";
import type { TableSpec } from "./fields.ts";
import {
  AUDIT,
  BACKEND,
  CLOUD,
  CONTENT_LIMITS,
  DICOM_PEER,
  ENDPOINT,
  HEALTH_CHECK,
  LOGGING,
  MANAGEMENT,
  NETWORK,
  PIPELINE,
  QUEUE,
  RUNTIME,
  TARGET,
  TOP_LEVEL,
} from "./schema.ts";
import type { OptionSchema } from "./component_type.ts";
import { optionSchemaOf } from "./registry.ts";
import { DEFAULT_NETWORK_NAME } from "./validate.ts";
import type { GatewayConfig, NetworkConfig } from "./types.ts";

/** Options of writeConfigToml. */
export interface WriteOptions {
  /**
   * Leave out `pipelines_path`: the written file already holds everything that was merged from
   * that directory, so loading it with the directory would define every entry twice.
   */
  selfContained?: boolean;
}

type Table = Record<string, unknown>;

/** Serializes a validated config as TOML that validates back to an equal config. */
export function writeConfigToml(config: GatewayConfig, options: WriteOptions = {}): string {
  const top = withoutDefaults(config, TOP_LEVEL);
  if (options.selfContained) delete top.pipelines_path;
  const sections: Table[] = [
    top,
    section("cloud", withoutDefaults(config.cloud, CLOUD)),
    section("network", networks(config.network)),
    section(
      "endpoints",
      mapValues(config.endpoints, (e) => ({
        ...withoutDefaults(e, ENDPOINT),
        ...nonEmpty("options", serviceOptions(e.options, optionSchemaOf("endpoint", e.service))),
      })),
    ),
    section(
      "backends",
      mapValues(config.backends, (b) => ({
        ...withoutDefaults(b, BACKEND),
        ...nonEmpty("options", serviceOptions(b.options, optionSchemaOf("backend", b.service))),
        ...(b.health_check ? { health_check: withoutDefaults(b.health_check, HEALTH_CHECK) } : {}),
        ...(b.queue ? { queue: withoutDefaults(b.queue, QUEUE) } : {}),
      })),
    ),
    section("targets", mapValues(config.targets, (t) => withoutDefaults(t, TARGET))),
    section(
      "middleware",
      mapValues(config.middleware, (m) => ({
        type: m.type,
        ...nonEmpty("options", serviceOptions(m.options, optionSchemaOf("middleware", m.type))),
      })),
    ),
    section(
      "pipelines",
      mapValues(config.pipelines, (p) => ({
        ...withoutDefaults(p, PIPELINE),
        // An empty tracking table means "tracked with the defaults": kept when present.
        ...(p.tracking ? { tracking: withoutDefaults(p.tracking, PIPELINE_TRACKING) } : {}),
      })),
    ),
    section(
      "proxy",
      nonEmpty("content_limits", withoutDefaults(config.proxy.content_limits, CONTENT_LIMITS)),
    ),
    section("management", {
      ...withoutDefaults(config.management, MANAGEMENT),
      ...(config.management.tokens && Object.keys(config.management.tokens).length
        ? {
          tokens: mapValues(config.management.tokens, (t) => withoutDefaults(t, MANAGEMENT_TOKEN)),
        }
        : {}),
    }),
    section("logging", withoutDefaults(config.logging, LOGGING)),
    section("runtime", config.runtime ? withoutDefaults(config.runtime, RUNTIME) : undefined),
    section(
      "audit",
      config.audit
        ? {
          ...withoutDefaults(config.audit, AUDIT),
          ...(config.audit.syslog
            ? { syslog: withoutDefaults(config.audit.syslog, AUDIT_SYSLOG) }
            : {}),
        }
        : undefined,
    ),
    section("tracking", config.tracking ? withoutDefaults(config.tracking, TRACKING) : undefined),
    // DICOM (issue 4): known AEs.
    section(
      "dicom",
      config.dicom
        ? { peers: mapValues(config.dicom.peers, (p) => withoutDefaults(p, DICOM_PEER)) }
        : undefined,
    ),
    section("alerts", config.alerts ? alertsTables(config.alerts) : undefined),
  ];
  const body = sections
    .filter((s) => Object.keys(s).length > 0)
    .map((s) => stringify(s).trimEnd())
    .join("\n\n");
  const header = "# Gateway configuration\n";
  return body === "" ? header : `${header}\n${spaceHeaders(body)}\n`;
}

/** The keys of `spec` present in `value` and different from their default, in spec order. */
function withoutDefaults(value: object, spec: TableSpec): Table {
  const source = value as Table;
  const out: Table = {};
  for (const [key, f] of Object.entries(spec)) {
    const v = source[key];
    if (v === undefined) continue;
    if (f.default !== undefined && JSON.stringify(v) === JSON.stringify(f.default)) continue;
    out[key] = v;
  }
  return out;
}

function serviceOptions(options: Table, schema: OptionSchema<never> | undefined): Table {
  return schema?.fields ? withoutDefaults(options, schema.fields) : options;
}

function networks(all: Record<string, NetworkConfig>): Table | undefined {
  const list = Object.values(all);
  const implicit = list.length === 1 && list[0].name === DEFAULT_NETWORK_NAME &&
    Object.keys(withoutDefaults(list[0], NETWORK)).length === 0 && !list[0].http3;
  if (implicit) return undefined;
  // No networks at all is written as an empty `[network]` table (not the same as leaving it out).
  return mapValues(all, (n) => {
    const out = withoutDefaults(n, NETWORK);
    if (n.http3) {
      const inherited: Table = {
        bind: n.bind,
        port: n.port,
        cert_path: n.tls_cert_path,
        key_path: n.tls_key_path,
      };
      out.http3 = Object.fromEntries(
        Object.entries(n.http3).filter(([k, v]) => inherited[k] !== v),
      );
    }
    return out;
  });
}

/** `{ name: value }`, or `{}` when value is undefined or an empty non-network table. */
function section(name: string, value: Table | undefined): Table {
  if (value === undefined) return {};
  if (name !== "network" && Object.keys(value).length === 0) return {};
  return { [name]: value };
}

function nonEmpty(key: string, value: Table): Table {
  return Object.keys(value).length ? { [key]: value } : {};
}

function mapValues<T>(record: Record<string, T>, fn: (value: T) => Table): Table {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, fn(v)]));
}

/** A blank line before every table header, for readability. */
function spaceHeaders(text: string): string {
  return text.replace(/([^\n])\n(\[)/g, "$1\n\n$2");
}
