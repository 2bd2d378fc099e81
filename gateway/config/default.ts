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

/** Loads the embedded default (relative paths resolve against the current directory). */
export function loadDefaultConfig(): Promise<LoadResult> {
  return loadConfigText(DEFAULT_CONFIG_TEXT, EMBEDDED_CONFIG_NAME, { env: () => undefined });
}
