/** The configuration the gateway runs without `--config`: an echo pipeline under `/echo`. */
import { loadConfigText, type LoadResult } from "./load.ts";

/** Name used in problems about the embedded configuration. */
export const EMBEDDED_CONFIG_NAME = "<embedded>";

/**
 * The embedded default. No `[network]` table, so one network `default` listens on 0.0.0.0:8080;
 * the management API keeps its default 127.0.0.1:9090 with prefix `admin`.
 */
export const DEFAULT_CONFIG_TEXT =
  `# Embedded default configuration: echo back whatever is sent under /echo.

[endpoints.echo]
service = "http"

[endpoints.echo.options]
path_prefix = "/echo"

[backends.echo]
service = "echo"

[pipelines.echo]
endpoints = ["echo"]
backends = ["echo"]
`;

/** Ports of the embedded default other than 8080 and 9090 (`--port`, `--management-port`). */
export interface DefaultPorts {
  /** Port of the data listener (network `default`, on 0.0.0.0). */
  port?: number;
  /** Port of the management API (on 127.0.0.1). */
  managementPort?: number;
}

/** The embedded default's text with `ports` in place of 8080 and 9090. */
export function defaultConfigText(ports: DefaultPorts = {}): string {
  let text = DEFAULT_CONFIG_TEXT;
  if (ports.port !== undefined) text += `\n[network.default]\nport = ${ports.port}\n`;
  if (ports.managementPort !== undefined) {
    text += `\n[management]\nport = ${ports.managementPort}\n`;
  }
  return text;
}

/**
 * Loads the embedded default (relative paths resolve against the current directory, its state
 * against `stateDir` when given: `GATEWAY_STATE_DIR`).
 */
export function loadDefaultConfig(
  ports: DefaultPorts = {},
  stateDir?: string,
): Promise<LoadResult> {
  return loadConfigText(defaultConfigText(ports), EMBEDDED_CONFIG_NAME, {
    env: () => undefined,
    stateDir,
  });
}
