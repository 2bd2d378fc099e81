/**
 * HTTP proxy benchmark (`deno task bench`, flags: --help). In one run on this machine, with
 * Debian's wrk: nginx serving a fixed 1 KiB JSON body (the upstream), nginx `proxy_pass` to it,
 * the gateway `http` pipeline to it, the gateway `echo` pipeline, and a bare `Deno.serve` server.
 * Prints requests/s, p50 and p99, the ratios gateway/nginx and echo/bare, and the p99 latency the
 * gateway adds at half its maximum load (fixed request rate: wrk with fixed_rate.lua).
 */

import { parseArgs } from "node:util";
import { findBinary, rssOf, runCommand } from "../../tests/support/mod.ts";
import { fixed, fixedJsonBody, markdownTable, verdict } from "./report.ts";
import {
  startBare,
  startBenchGateway,
  startMinimalProxy,
  startNginxProxy,
  startUpstream,
  type Stoppable,
} from "./servers.ts";
import { runWrk, type WrkResult } from "./wrk.ts";

/** Targets printed next to the results. */
export const TARGETS = { gatewayOverNginx: 0.6, echoOverBare: 0.7, p99AddedMs: 1 } as const;

/** Command-line settings of the benchmark. */
export interface BenchFlags {
  durationSec: number;
  connections: number;
  threads: number;
  warmupSec: number;
  /** Fixed-rate phase: this fraction of the gateway's maximum throughput. */
  rateFraction: number;
  bodyBytes: number;
  /** Write all results as JSON to this file. */
  json?: string;
}

const USAGE = `deno task bench [flags]
  --duration SEC      length of each measured wrk run (default 10)
  --connections N     wrk connections at maximum load (default 64)
  --threads N         wrk threads (default 2)
  --warmup SEC        unmeasured wrk run before each measurement (default 3)
  --rate-fraction F   fixed-rate phase at F x the gateway's max req/s (default 0.5)
  --body-bytes N      size of the upstream's JSON body (default 1024)
  --json FILE         also write the results as JSON`;

/** Parses the flags of the benchmark (see USAGE); throws on unknown or invalid ones. */
export function parseFlags(args: string[]): BenchFlags | "help" {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "64" },
      threads: { type: "string", default: "2" },
      warmup: { type: "string", default: "3" },
      "rate-fraction": { type: "string", default: "0.5" },
      "body-bytes": { type: "string", default: "1024" },
      json: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  const positive = (name: keyof typeof values, integer = true): number => {
    const value = Number(values[name]);
    if (!(value > 0) || (integer && !Number.isInteger(value))) {
      throw new Error(`--${name} must be a positive ${integer ? "integer" : "number"}`);
    }
    return value;
  };
  return {
    durationSec: positive("duration"),
    connections: positive("connections"),
    threads: positive("threads"),
    warmupSec: values.warmup === "0" ? 0 : positive("warmup"),
    rateFraction: positive("rate-fraction", false),
    bodyBytes: positive("body-bytes"),
    json: values.json,
  };
}

/** One measured system. */
interface Target {
  key: "upstream" | "nginx_proxy" | "minimal_proxy" | "gateway_http" | "gateway_echo" | "bare";
  label: string;
  url: string;
  /** Expected response body, when it is fixed. */
  body?: string;
}

/** Fails unless `url` answers 200 (with `body` when given): measure the right thing. */
async function verify(target: Target): Promise<void> {
  const response = await fetch(target.url);
  const text = await response.text();
  if (response.status !== 200 || (target.body !== undefined && text !== target.body)) {
    throw new Error(
      `${target.label} (${target.url}) answered ${response.status}: ${text.slice(0, 300)}`,
    );
  }
}

/** A warm-up run (not recorded), then the measured run. */
async function measure(
  url: string,
  flags: BenchFlags,
  connections: number,
  script?: { path: string; args: string[] },
): Promise<WrkResult> {
  const base = {
    url,
    threads: flags.threads,
    connections,
    script: script?.path,
    scriptArgs: script?.args,
  };
  if (flags.warmupSec > 0) await runWrk({ ...base, durationSec: flags.warmupSec });
  return await runWrk({ ...base, durationSec: flags.durationSec });
}

/** Versions and machine facts printed above the results. */
async function environment(): Promise<Record<string, string>> {
  const first = async (command: string, args: string[]) => {
    try {
      const result = await runCommand(command, args);
      return (result.stdout + result.stderr).split("\n")[0].trim();
    } catch {
      return "n/a";
    }
  };
  const cpu = (await Deno.readTextFile("/proc/cpuinfo").catch(() => ""))
    .match(/^model name\s*:\s*(.+)$/m)?.[1] ?? "unknown";
  return {
    date: new Date().toISOString(),
    cpu: `${navigator.hardwareConcurrency} x ${cpu}`,
    deno: Deno.version.deno,
    nginx: await first(findBinary("nginx") ?? "nginx", ["-v"]),
    wrk: await first("wrk", ["-v"]),
  };
}

/** Runs the whole benchmark and prints the report. */
export async function runBench(flags: BenchFlags): Promise<Record<string, unknown>> {
  for (const [binary, aptPackage] of [["wrk", "wrk"], ["nginx", "nginx-light"]]) {
    if (!findBinary(binary)) {
      throw new Error(`the benchmark needs '${binary}': apt-get install ${aptPackage}`);
    }
  }
  const env = await environment();
  console.log(`# HTTP proxy benchmark, ${env.date}`);
  for (const [key, value] of Object.entries(env)) console.log(`${key}: ${value}`);
  console.log(
    `wrk: -t${flags.threads} -c${flags.connections} -d${flags.durationSec}s --latency ` +
      `(after a ${flags.warmupSec}s warm-up run each); body ${flags.bodyBytes} bytes\n`,
  );

  const started: Stoppable[] = [];
  try {
    const body = fixedJsonBody(flags.bodyBytes);
    const upstream = await startUpstream(body);
    started.push(upstream);
    const proxy = await startNginxProxy(upstream.port);
    started.push(proxy);
    const minimal = await startMinimalProxy(upstream.url);
    started.push(minimal);
    const { gateway, dataPort } = await startBenchGateway(upstream.url);
    started.push(gateway);
    const bare = await startBare();
    started.push(bare);

    const targets: Target[] = [
      { key: "upstream", label: "nginx upstream (direct)", url: `${upstream.url}/`, body },
      { key: "nginx_proxy", label: "nginx proxy_pass", url: `${proxy.url}/`, body },
      {
        key: "minimal_proxy",
        label: "minimal Deno proxy (reference)",
        url: `${minimal.url}/`,
        body,
      },
      {
        key: "gateway_http",
        label: "gateway http pipeline",
        url: `${gateway.dataUrl(dataPort)}/api/`,
        body,
      },
      {
        key: "gateway_echo",
        label: "gateway echo pipeline",
        url: `${gateway.dataUrl(dataPort)}/echo/`,
      },
      { key: "bare", label: "bare Deno.serve hello", url: `${bare.url}/` },
    ];
    for (const target of targets) await verify(target);

    // A failed run names its target and, for the gateway, shows the gateway's last output.
    const explain = (target: Target) => (error: Error): never => {
      const output = target.key.startsWith("gateway") ? `\n${gateway.output()}` : "";
      throw new Error(`${target.label}: ${error.message}${output}`);
    };
    const rssBefore = rssOf(gateway.pid);
    const max: Partial<Record<Target["key"], WrkResult>> = {};
    for (const target of targets) {
      console.error(`measuring ${target.label} ...`);
      max[target.key] = await measure(target.url, flags, flags.connections).catch(explain(target));
    }
    const rssAfter = rssOf(gateway.pid);
    const row = (target: Target, result: WrkResult) => [
      target.label,
      fixed(result.requestsPerSec, 0),
      fixed(result.p50Ms, 3),
      fixed(result.p99Ms, 3),
      String(result.socketErrors + result.non2xx),
    ];
    console.log(`## Maximum load (${flags.connections} connections)\n`);
    console.log(markdownTable(
      ["target", "req/s", "p50 ms", "p99 ms", "errors"],
      targets.map((target) => row(target, max[target.key]!)),
    ));

    const gatewayOverNginx = max.gateway_http!.requestsPerSec / max.nginx_proxy!.requestsPerSec;
    const echoOverBare = max.gateway_echo!.requestsPerSec / max.bare!.requestsPerSec;
    const minimalOverNginx = max.minimal_proxy!.requestsPerSec / max.nginx_proxy!.requestsPerSec;
    const gatewayOverMinimal = max.gateway_http!.requestsPerSec /
      max.minimal_proxy!.requestsPerSec;

    const rate = flags.rateFraction * max.gateway_http!.requestsPerSec;
    const threads = Math.min(flags.threads, flags.connections);
    const script = {
      path: new URL("./fixed_rate.lua", import.meta.url).pathname,
      args: [rate.toFixed(1), String(threads)],
    };
    const fixedRate: Partial<Record<Target["key"], WrkResult>> = {};
    const rated = targets.filter((t) =>
      ["upstream", "nginx_proxy", "minimal_proxy", "gateway_http"].includes(t.key)
    );
    for (const target of rated) {
      console.error(`measuring ${target.label} at a fixed rate ...`);
      fixedRate[target.key] = await measure(target.url, flags, flags.connections, script)
        .catch(explain(target));
    }
    const p99Added = fixedRate.gateway_http!.p99Ms - fixedRate.upstream!.p99Ms;
    const p99AddedNginx = fixedRate.nginx_proxy!.p99Ms - fixedRate.upstream!.p99Ms;
    const p99AddedMinimal = fixedRate.minimal_proxy!.p99Ms - fixedRate.upstream!.p99Ms;
    console.log(
      `\n## Fixed rate: ${fixed(flags.rateFraction)} x gateway max = ${fixed(rate, 0)} req/s ` +
        `(wrk paced by fixed_rate.lua over ${flags.connections} connections)\n`,
    );
    console.log(markdownTable(
      ["target", "req/s", "p50 ms", "p99 ms", "errors"],
      rated.map((target) => row(target, fixedRate[target.key]!)),
    ));

    console.log("\n## Summary\n");
    console.log(markdownTable(["measure", "result", "target", "verdict"], [
      [
        "throughput gateway http / nginx proxy",
        fixed(gatewayOverNginx),
        `>= ${TARGETS.gatewayOverNginx}`,
        verdict(gatewayOverNginx, ">=", TARGETS.gatewayOverNginx),
      ],
      [
        "throughput gateway echo / bare Deno.serve",
        fixed(echoOverBare),
        `>= ${TARGETS.echoOverBare}`,
        verdict(echoOverBare, ">=", TARGETS.echoOverBare),
      ],
      [
        "p99 added by the gateway at the fixed rate (ms)",
        fixed(p99Added, 3),
        `< ${TARGETS.p99AddedMs}`,
        verdict(p99Added, "<", TARGETS.p99AddedMs),
      ],
      ["p99 added by nginx proxy at the fixed rate (ms)", fixed(p99AddedNginx, 3), "", ""],
      [
        "reference: minimal Deno proxy / nginx proxy (the runtime's ceiling)",
        fixed(minimalOverNginx),
        "",
        "",
      ],
      ["reference: gateway http / minimal Deno proxy", fixed(gatewayOverMinimal), "", ""],
      [
        "reference: p99 added by the minimal Deno proxy at the fixed rate (ms)",
        fixed(p99AddedMinimal, 3),
        "",
        "",
      ],
      [
        "gateway RSS before / after the load runs (MiB)",
        `${fixed(rssBefore / 2 ** 20, 1)} / ${fixed(rssAfter / 2 ** 20, 1)}`,
        "",
        "",
      ],
    ]));
    return {
      environment: env,
      flags,
      max,
      fixedRate: { rate, connections: flags.connections, results: fixedRate },
      ratios: {
        gatewayOverNginx,
        echoOverBare,
        p99AddedMs: p99Added,
        p99AddedNginxMs: p99AddedNginx,
        p99AddedMinimalMs: p99AddedMinimal,
        minimalOverNginx,
        gatewayOverMinimal,
      },
      gatewayRssBytes: { before: rssBefore, after: rssAfter },
      targets: TARGETS,
    };
  } finally {
    for (const item of started.reverse()) await item.stop().catch(() => {});
  }
}

if (import.meta.main) {
  try {
    const flags = parseFlags(Deno.args);
    if (flags === "help") {
      console.log(USAGE);
    } else {
      const results = await runBench(flags);
      if (flags.json) await Deno.writeTextFile(flags.json, JSON.stringify(results, null, 2) + "\n");
    }
  } catch (error) {
    console.error(`bench: ${(error as Error).message}`);
    Deno.exit(1);
  }
}
