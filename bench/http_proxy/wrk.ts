/** Running Debian's `wrk` and reading its report. */

import { runCommand } from "../../tests/support/mod.ts";

/** What one wrk run measured. Latencies are in milliseconds. */
export interface WrkResult {
  requestsPerSec: number;
  requests: number;
  p50Ms: number;
  p75Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Connect, read, write and timeout errors together. */
  socketErrors: number;
  /** Responses with a status outside 2xx/3xx. */
  non2xx: number;
}

/** Options of one wrk run. */
export interface WrkOptions {
  url: string;
  threads: number;
  connections: number;
  durationSec: number;
  /** Request headers (`-H`), e.g. `Authorization: Bearer …`. */
  headers?: string[];
  /** A Lua script (`-s`) and its arguments (after `--`). */
  script?: string;
  scriptArgs?: string[];
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Converts a wrk duration such as `812.00us`, `1.20ms` or `2.01s` to milliseconds. */
export function wrkDurationMs(text: string): number {
  const match = text.trim().match(/^([\d.]+)(us|ms|s|m|h)$/);
  if (!match) throw new Error(`not a wrk duration: ${text}`);
  return Number(match[1]) * UNIT_MS[match[2]];
}

/** Parses the report that `wrk --latency` prints. */
export function parseWrk(output: string): WrkResult {
  const number = (pattern: RegExp, what: string): string => {
    const match = output.match(pattern);
    if (!match) throw new Error(`wrk output has no ${what}:\n${output}`);
    return match[1];
  };
  const percentile = (p: number) =>
    wrkDurationMs(number(new RegExp(`^\\s+${p}(?:\\.0+)?%\\s+(\\S+)\\s*$`, "m"), `${p}% latency`));
  const errors = output.match(
    /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/,
  );
  return {
    requestsPerSec: Number(number(/^Requests\/sec:\s+([\d.]+)/m, "Requests/sec")),
    requests: Number(number(/^\s+(\d+) requests in /m, "request count")),
    p50Ms: percentile(50),
    p75Ms: percentile(75),
    p90Ms: percentile(90),
    p99Ms: percentile(99),
    socketErrors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    non2xx: Number(output.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0),
  };
}

/** The arguments of `wrk` for `options`. */
export function wrkArgs(options: WrkOptions): string[] {
  const threads = Math.max(1, Math.min(options.threads, options.connections));
  const args = [
    `-t${threads}`,
    `-c${options.connections}`,
    `-d${options.durationSec}s`,
    "--latency",
    "--timeout",
    "10s",
  ];
  for (const h of options.headers ?? []) args.push("-H", h);
  if (options.script) args.push("-s", options.script);
  args.push(options.url);
  if (options.scriptArgs?.length) args.push("--", ...options.scriptArgs);
  return args;
}

/** Runs wrk once and parses its report; throws when wrk fails. */
export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const result = await runCommand("wrk", wrkArgs(options), {
    timeoutMs: (options.durationSec + 60) * 1000,
  });
  if (result.code !== 0) {
    throw new Error(`wrk exited with code ${result.code}: ${result.stderr}${result.stdout}`);
  }
  return parseWrk(result.stdout);
}
