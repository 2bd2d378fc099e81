/**
 * `startGateway`: a gateway inside another Deno program, from a config file, TOML text or a config
 * object, with the same validation, listeners, management API and reloads as the executable.
 */
import { fileURLToPath as fromFileUrl } from "node:url";
import { stringify } from "smol-toml";
import type { ConfigProblem } from "../../shared/gateway_config/mod.ts";
import { Logger } from "../../shared/mod.ts";
import { createMetrics } from "../observability/mod.ts";
import { Gateway } from "./gateway.ts";

/**
 * Where the configuration comes from: a file path (watched and hot-reloaded like `--config`),
 * TOML text, or an object shaped like the TOML file (`{ endpoints: { api: { service: "http" } } }`).
 */
export type GatewayConfigSource =
  | string
  | URL
  | { toml: string; name?: string }
  | Record<string, unknown>;

/** Options of startGateway. */
export interface StartGatewayOptions {
  /** The configuration; absent: the embedded default (echo under `/echo` on port 8080). */
  config?: GatewayConfigSource;
  /** Environment for `${VAR}` in the configuration and the management token; default: `Deno.env`. */
  env?: (name: string) => string | undefined;
  /** Seconds shutdown waits for in-flight requests; default `[runtime] shutdown_grace_secs`. */
  drainSeconds?: number;
  /**
   * Data-plane isolates (default 1: this thread only). Worker threads load the gateway's own
   * modules, so a configuration that names a type registered in this program cannot run in them.
   */
  workers?: number;
}

/** The outcome of a reload. */
export interface GatewayReload {
  /** True when the new configuration runs. */
  ok: boolean;
  /** The configuration generation now running. */
  generation: number;
  /** Every problem of a configuration that was refused (the previous one keeps running). */
  problems: ConfigProblem[];
}

/** A gateway started by startGateway. */
export interface RunningGateway {
  /** The bound port of each `[network.<name>]`. */
  ports(): Record<string, number>;
  /** The management API's bound port, when it is enabled. */
  managementPort(): number | undefined;
  /** The Prometheus text of `/metrics`. */
  metricsText(): string;
  /** Loads the configuration again; an invalid one is refused and the running one kept. */
  reload(): Promise<GatewayReload>;
  /** Stops accepting, drains in-flight requests and DIMSE associations, flushes queues and audit. */
  shutdown(): Promise<void>;
}

/**
 * Starts a gateway in this process. Throws a ConfigError whose `problems` list every problem
 * (file, line, key) when the configuration is invalid, or the listener's error when a port is
 * taken; nothing is left listening then.
 */
export async function startGateway(options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const source = options.config;
  let configFile: string | null = null;
  let configText: { text: string; name: string } | undefined;
  if (typeof source === "string") configFile = source;
  else if (source instanceof URL) {
    if (source.protocol !== "file:") {
      throw new TypeError(`a configuration URL must be a file: URL, not ${source.protocol}`);
    }
    configFile = fromFileUrl(source);
  } else if (source && typeof source.toml === "string") {
    configText = { text: source.toml, name: String(source.name ?? "<config text>") };
  } else if (source) {
    configText = { text: stringify(source), name: "<config object>" };
  }
  const metrics = createMetrics();
  const gateway = new Gateway({
    configFile,
    configText,
    logger: new Logger({ level: "info", format: "json" }),
    metrics,
    env: options.env,
    drainSeconds: options.drainSeconds,
    workers: options.workers ?? 1,
  });
  try {
    await gateway.start();
  } catch (err) {
    // A listener may be up when a later one failed (a port taken): nothing stays behind.
    await gateway.shutdown().catch(() => {});
    throw err;
  }
  return {
    ports: () => gateway.ports(),
    managementPort: () => gateway.managementPort(),
    metricsText: () => metrics.render(),
    reload: async () => {
      const outcome = await gateway.reloadNow();
      return { ok: outcome.ok, generation: outcome.generation, problems: outcome.errors ?? [] };
    },
    shutdown: () => gateway.shutdown(),
  };
}
