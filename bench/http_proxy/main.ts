/**
 * HTTP proxy benchmark (`deno task bench`, flags: --help). In one run on this machine, with
 * Debian's wrk, against nginx serving a fixed 1 KiB JSON body (the upstream): nginx `proxy_pass`,
 * HAProxy, Caddy `reverse_proxy`, a minimal Node 20 undici proxy, the minimal Deno proxies (runtime
 * `fetch`, and our HTTP/1.1 client), the gateway `http` and `echo` pipelines and a bare
 * `Deno.serve` server. Each round measures every target at maximum load, then the proxies at a
 * fixed rate (half the gateway's maximum); the report prints the medians of the rounds, the ratios
 * of the gateway to each peer, and the bytes of V8 heap allocated per request.
 */

import { parseArgs } from "node:util";
import { findBinary, rssOf, runCommand } from "../../tests/support/mod.ts";
import { GcTraceMeter, measureAllocation } from "./allocation.ts";
import { fixed, fixedJsonBody, markdownTable, median, verdict } from "./report.ts";
import {
  startBare,
  startBenchGateway,
  startCaddy,
  startDenoFetchProxy,
  startHaproxy,
  startMinimalProxy,
  startNginxProxy,
  startNodeUndiciProxy,
  startUpstream,
  type Stoppable,
} from "./servers.ts";
import { runWrk, type WrkResult } from "./wrk.ts";

/** Targets printed next to the results. */
export const TARGETS = {
  gatewayOverNginx: 0.6,
  echoOverBare: 0.7,
  p99AddedMs: 1,
  /** V8 heap allocated per gateway http request, bytes (issue 40: at most 12 KB). */
  gatewayBytesPerRequest: 12 * 1024,
  /** V8 heap allocated per request of the minimal proxy with our client (issue 40: at most 8 KB). */
  clientBytesPerRequest: 8 * 1024,
  /**
   * Our client's own share: the minimal proxy's bytes over a proxy's floor (the same server
   * reading the request's fields and abort signal, no client), issue 40's "the client's garbage
   * at most 8 KB".
   */
  clientShareBytesPerRequest: 8 * 1024,
  /** Throughput of the gateway on every core over one worker, in the same run. */
  workersOverOne: 1.3,
} as const;

/** Command-line settings of the benchmark. */
export interface BenchFlags {
  durationSec: number;
  connections: number;
  threads: number;
  warmupSec: number;
  /** Fixed-rate phase: this fraction of the gateway's maximum throughput. */
  rateFraction: number;
  bodyBytes: number;
  /** Rounds of every measurement; the report prints their medians. */
  rounds: number;
  /** Requests of the allocation measurement (0 skips it). */
  allocationRequests: number;
  /** Only the allocation measurement (no wrk runs, no peers), `rounds` times. */
  allocationOnly: boolean;
  /** With `allocationOnly`: only these programs (keys of the allocation table), else all. */
  programs?: string[];
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
  --rounds N          rounds of every measurement, medians reported (default 3)
  --allocation N      requests of the allocation-per-request measurement (default 50000; 0 skips)
  --allocation-only   only the allocation measurement, --rounds times (medians); no wrk, no peers
  --programs A,B      with --allocation-only: only these (gateway, minimal_proxy, deno_fetch,
                      raw_floor, raw_fields_floor, bare); minimal_proxy brings
                      raw_fields_floor along (our client's share is measured over it)
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
      rounds: { type: "string", default: "3" },
      allocation: { type: "string", default: "50000" },
      "allocation-only": { type: "boolean", default: false },
      programs: { type: "string" },
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
    rounds: positive("rounds"),
    allocationRequests: values.allocation === "0" ? 0 : positive("allocation"),
    allocationOnly: values["allocation-only"] === true,
    programs: values.programs?.split(","),
    json: values.json,
  };
}

/** The measured systems. */
type TargetKey =
  | "upstream"
  | "nginx_proxy"
  | "haproxy"
  | "caddy"
  | "node_undici"
  | "deno_fetch"
  | "minimal_proxy"
  | "minimal_workers"
  | "gateway_http"
  | "gateway_workers"
  | "gateway_echo"
  | "bare";

/** One measured system. */
interface Target {
  key: TargetKey;
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
    haproxy: await first(findBinary("haproxy") ?? "haproxy", ["-v"]),
    caddy: await first(findBinary("caddy") ?? "caddy", ["version"]),
    node: await first(findBinary("node") ?? "node", ["--version"]),
    wrk: await first("wrk", ["-v"]),
  };
}

/** The proxies measured at the fixed rate (beside the upstream itself). */
const PROXIES: TargetKey[] = [
  "nginx_proxy",
  "haproxy",
  "caddy",
  "node_undici",
  "deno_fetch",
  "minimal_proxy",
  "minimal_workers",
  "gateway_http",
  "gateway_workers",
];

/** The programs of the allocation measurement, as printed. */
const ALLOCATION_LABELS: Record<string, string> = {
  gateway_http: "gateway http pipeline",
  gateway_echo: "gateway echo pipeline",
  minimal_proxy: "Deno.serve + our HTTP/1.1 client, minimal",
  deno_fetch: "Deno.serve + fetch, minimal",
  raw_floor: "Deno.serve + Deno.connect, fixed request, no client (the runtime's floor)",
  raw_fields_floor:
    "Deno.serve + Deno.connect + the request's fields and abort signal (a proxy's floor)",
  bare: "bare Deno.serve hello",
};

/** The bytes of V8 heap each Deno program allocates per request: medians of `rounds`. */
async function allocationPerRequest(
  upstreamUrl: string,
  requests: number,
  rounds: number,
  programs?: string[],
): Promise<Record<string, number>> {
  const runs: Record<string, number[]> = {};
  for (let round = 1; round <= rounds; round++) {
    console.error(`allocation round ${round} of ${rounds} ...`);
    const one = await allocationRound(upstreamUrl, requests, programs);
    for (const [key, bytes] of Object.entries(one)) (runs[key] ??= []).push(bytes);
  }
  return Object.fromEntries(Object.entries(runs).map(([key, values]) => [key, median(values)]));
}

/** The allocation table: each program's median, and the targets beside our two programs. */
function printAllocation(allocation: Record<string, number>, flags: BenchFlags): void {
  console.log(
    `\n## V8 heap allocated per request (${flags.allocationRequests} requests after 5,000 ` +
      `warm-up; --trace-gc-nvp; medians of ${flags.rounds})\n`,
  );
  const targets: Record<string, number> = {
    gateway_http: TARGETS.gatewayBytesPerRequest,
    minimal_proxy: TARGETS.clientBytesPerRequest,
  };
  console.log(markdownTable(
    ["program", "bytes per request", "target", "verdict"],
    Object.entries(allocation).map(([key, bytes]) => [
      ALLOCATION_LABELS[key],
      fixed(bytes, 0),
      targets[key] ? `<= ${targets[key]}` : "",
      targets[key] ? verdict(bytes, "<=", targets[key]) : "",
    ]),
  ));
  const floor = allocation.raw_fields_floor;
  if (floor !== undefined && allocation.minimal_proxy !== undefined) {
    // What the runtime takes from any proxy that reads the fields and follows the client's
    // abort, against what our client adds to it.
    console.log(
      `\nA proxy's floor on this runtime (fields and abort signal read): ${
        fixed(floor, 0)
      } bytes; ` +
        `our client adds ${fixed(allocation.minimal_proxy - floor, 0)}` +
        (allocation.gateway_http !== undefined
          ? `, the gateway ${fixed(allocation.gateway_http - floor, 0)}.`
          : "."),
    );
  }
  const verdicts = allocationVerdicts(allocation);
  if (verdicts.length > 0) {
    console.log(
      "\n" +
        markdownTable(["measure (bytes per request)", "result", "target", "verdict"], verdicts),
    );
  }
}

/**
 * The two figures issue 40 item 4 sets targets for, from one run: the gateway's allocation per
 * proxied request (at most 12 KB) and our client's own share, the minimal proxy over a proxy's
 * floor (at most 8 KB). A figure whose programs were not measured is left out.
 */
export function allocationVerdicts(allocation: Record<string, number>): string[][] {
  const rows: string[][] = [];
  if (allocation.gateway_http !== undefined) {
    rows.push([
      "gateway http pipeline",
      fixed(allocation.gateway_http, 0),
      `<= ${TARGETS.gatewayBytesPerRequest}`,
      verdict(allocation.gateway_http, "<=", TARGETS.gatewayBytesPerRequest),
    ]);
  }
  if (allocation.minimal_proxy !== undefined && allocation.raw_fields_floor !== undefined) {
    const share = allocation.minimal_proxy - allocation.raw_fields_floor;
    rows.push([
      "our HTTP/1.1 client's share (minimal proxy - proxy floor)",
      fixed(share, 0),
      `<= ${TARGETS.clientShareBytesPerRequest}`,
      verdict(share, "<=", TARGETS.clientShareBytesPerRequest),
    ]);
  }
  return rows;
}

/** The bytes of V8 heap each Deno program allocates per request (`--trace-gc-nvp`), once. */
async function allocationRound(
  upstreamUrl: string,
  requests: number,
  only?: string[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const trace = (meter: GcTraceMeter) => ({ v8Flags: ["--trace-gc-nvp"], onStdout: meter.feed });
  // The client's share is the minimal proxy over the proxy floor: measured in the same run.
  const wanted = (key: string) =>
    only === undefined || only.includes(key) ||
    (key === "raw_fields_floor" && only.includes("minimal_proxy"));
  if (wanted("gateway")) {
    const gatewayMeter = new GcTraceMeter();
    const { gateway, dataPort } = await startBenchGateway(upstreamUrl, trace(gatewayMeter));
    try {
      out.gateway_http = (await measureAllocation(
        gatewayMeter,
        `${gateway.dataUrl(dataPort)}/api/`,
        requests,
      )).perRequest;
      out.gateway_echo = (await measureAllocation(
        gatewayMeter,
        `${gateway.dataUrl(dataPort)}/echo/`,
        requests,
      )).perRequest;
    } finally {
      await gateway.stop();
    }
  }
  const programs: [string, (meter: GcTraceMeter) => Promise<Stoppable & { url: string }>][] = [
    ["minimal_proxy", (m) => startMinimalProxy(upstreamUrl, trace(m))],
    ["deno_fetch", (m) => startDenoFetchProxy(upstreamUrl, trace(m))],
    ["raw_floor", (m) => startMinimalProxy(upstreamUrl, trace(m), 1, "raw")],
    ["raw_fields_floor", (m) => startMinimalProxy(upstreamUrl, trace(m), 1, "raw-fields")],
    ["bare", (m) => startBare(trace(m))],
  ];
  for (const [key, start] of programs) {
    if (!wanted(key)) continue;
    const meter = new GcTraceMeter();
    const program = await start(meter);
    try {
      out[key] = (await measureAllocation(meter, `${program.url}/`, requests)).perRequest;
    } finally {
      await program.stop();
    }
  }
  return out;
}

/** Only the allocation measurement (`--allocation-only`): the upstream and the Deno programs. */
async function runAllocationOnly(flags: BenchFlags): Promise<Record<string, unknown>> {
  const upstream = await startUpstream(fixedJsonBody(flags.bodyBytes));
  try {
    console.log(`# HTTP proxy benchmark, allocation only, ${new Date().toISOString()}`);
    console.log(`deno: ${Deno.version.deno}; body ${flags.bodyBytes} bytes`);
    const allocation = await allocationPerRequest(
      upstream.url,
      flags.allocationRequests,
      flags.rounds,
      flags.programs,
    );
    printAllocation(allocation, flags);
    return { flags, allocationBytesPerRequest: allocation, targets: TARGETS };
  } finally {
    await upstream.stop();
  }
}

/** Runs the whole benchmark and prints the report. */
export async function runBench(flags: BenchFlags): Promise<Record<string, unknown>> {
  if (flags.allocationOnly) {
    if (flags.allocationRequests === 0) throw new Error("--allocation-only needs --allocation > 0");
    return await runAllocationOnly(flags);
  }
  for (
    const [binary, aptPackage] of [
      ["wrk", "wrk"],
      ["nginx", "nginx-light"],
      ["haproxy", "haproxy"],
      ["caddy", "caddy"],
      ["node", "nodejs"],
    ]
  ) {
    if (!findBinary(binary)) {
      throw new Error(`the benchmark needs '${binary}': apt-get install ${aptPackage}`);
    }
  }
  const env = await environment();
  console.log(`# HTTP proxy benchmark, ${env.date}`);
  for (const [key, value] of Object.entries(env)) console.log(`${key}: ${value}`);
  console.log(
    `wrk: -t${flags.threads} -c${flags.connections} -d${flags.durationSec}s --latency ` +
      `(after a ${flags.warmupSec}s warm-up run each); body ${flags.bodyBytes} bytes; ` +
      `${flags.rounds} round(s), medians\n`,
  );

  const started: Stoppable[] = [];
  try {
    const body = fixedJsonBody(flags.bodyBytes);
    const upstream = await startUpstream(body);
    started.push(upstream);
    const start = async <T extends Stoppable>(p: Promise<T>): Promise<T> => {
      const value = await p;
      started.push(value);
      return value;
    };
    const nginx = await start(startNginxProxy(upstream.port));
    const haproxy = await start(startHaproxy(upstream.port));
    const caddy = await start(startCaddy(upstream.port));
    const node = await start(startNodeUndiciProxy(upstream.url));
    const denoFetch = await start(startDenoFetchProxy(upstream.url));
    const minimal = await start(startMinimalProxy(upstream.url));
    const { gateway, dataPort } = await startBenchGateway(upstream.url);
    started.push(gateway);
    // The same gateway over every core: [runtime] workers = the cores (at least 2).
    const cores = Math.max(2, navigator.hardwareConcurrency);
    const multi = await startBenchGateway(upstream.url, undefined, cores);
    started.push(multi.gateway);
    const minimalMulti = await start(startMinimalProxy(upstream.url, undefined, cores));
    const bare = await start(startBare());

    const targets: Target[] = [
      { key: "upstream", label: "nginx upstream (direct)", url: `${upstream.url}/`, body },
      { key: "nginx_proxy", label: "nginx proxy_pass (1 worker)", url: `${nginx.url}/`, body },
      { key: "haproxy", label: "HAProxy (1 thread)", url: `${haproxy.url}/`, body },
      { key: "caddy", label: "Caddy reverse_proxy (GOMAXPROCS=1)", url: `${caddy.url}/`, body },
      { key: "node_undici", label: "Node 20 + undici Pool, minimal", url: `${node.url}/`, body },
      { key: "deno_fetch", label: "Deno.serve + fetch, minimal", url: `${denoFetch.url}/`, body },
      {
        key: "minimal_proxy",
        label: "Deno.serve + our HTTP/1.1 client, minimal",
        url: `${minimal.url}/`,
        body,
      },
      {
        key: "minimal_workers",
        label: `Deno.serve + our HTTP/1.1 client, minimal, ${cores} workers`,
        url: `${minimalMulti.url}/`,
        body,
      },
      {
        key: "gateway_http",
        label: "gateway http pipeline",
        url: `${gateway.dataUrl(dataPort)}/api/`,
        body,
      },
      {
        key: "gateway_workers",
        label: `gateway http pipeline, ${cores} workers`,
        url: `${multi.gateway.dataUrl(multi.dataPort)}/api/`,
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
      const output = target.key === "gateway_workers"
        ? `\n${multi.gateway.output()}`
        : target.key.startsWith("gateway")
        ? `\n${gateway.output()}`
        : "";
      throw new Error(`${target.label}: ${error.message}${output}`);
    };
    const rssBefore = rssOf(gateway.pid);
    const maxRuns: Partial<Record<TargetKey, WrkResult[]>> = {};
    const rateRuns: Partial<Record<TargetKey, WrkResult[]>> = {};
    let rate = 0;
    const threads = Math.min(flags.threads, flags.connections);
    const rated = targets.filter((t) => t.key === "upstream" || PROXIES.includes(t.key));
    for (let round = 1; round <= flags.rounds; round++) {
      for (const target of targets) {
        console.error(`round ${round}: ${target.label} at maximum load ...`);
        const result = await measure(target.url, flags, flags.connections).catch(explain(target));
        (maxRuns[target.key] ??= []).push(result);
      }
      // The fixed rate: half the gateway's maximum of the first round, the same in every round.
      if (round === 1) rate = flags.rateFraction * maxRuns.gateway_http![0].requestsPerSec;
      const script = {
        path: new URL("./fixed_rate.lua", import.meta.url).pathname,
        args: [rate.toFixed(1), String(threads)],
      };
      for (const target of rated) {
        console.error(`round ${round}: ${target.label} at ${fixed(rate, 0)} req/s ...`);
        const result = await measure(target.url, flags, flags.connections, script)
          .catch(explain(target));
        (rateRuns[target.key] ??= []).push(result);
      }
    }
    const rssAfter = rssOf(gateway.pid);
    const maxOf = (key: TargetKey) => median(maxRuns[key]!.map((r) => r.requestsPerSec));
    const p99MaxOf = (key: TargetKey) => median(maxRuns[key]!.map((r) => r.p99Ms));
    const p99RateOf = (key: TargetKey) => median(rateRuns[key]!.map((r) => r.p99Ms));
    const errorsOf = (runs: WrkResult[]) =>
      String(runs.reduce((n, r) => n + r.socketErrors + r.non2xx, 0));

    console.log(`## Maximum load (${flags.connections} connections), medians of ${flags.rounds}\n`);
    console.log(markdownTable(
      ["target", "req/s", "p99 ms", "errors"],
      targets.map((t) => [
        t.label,
        fixed(maxOf(t.key), 0),
        fixed(p99MaxOf(t.key), 3),
        errorsOf(maxRuns[t.key]!),
      ]),
    ));
    console.log(
      `\n## Fixed rate: ${fixed(flags.rateFraction)} x gateway max = ${fixed(rate, 0)} req/s ` +
        `(wrk paced by fixed_rate.lua over ${flags.connections} connections), medians\n`,
    );
    const upstreamP99 = p99RateOf("upstream");
    console.log(markdownTable(
      ["target", "p50 ms", "p99 ms", "p99 added ms", "errors"],
      rated.map((t) => [
        t.label,
        fixed(median(rateRuns[t.key]!.map((r) => r.p50Ms)), 3),
        fixed(p99RateOf(t.key), 3),
        t.key === "upstream" ? "" : fixed(p99RateOf(t.key) - upstreamP99, 3),
        errorsOf(rateRuns[t.key]!),
      ]),
    ));

    const peers = PROXIES.filter((k) =>
      k !== "gateway_http" && k !== "gateway_workers" && k !== "minimal_workers"
    );
    console.log("\n## The gateway against each peer (medians)\n");
    console.log(markdownTable(
      ["peer", "throughput gateway / peer", "p99 added: gateway - peer (ms)"],
      peers.map((k) => [
        targets.find((t) => t.key === k)!.label,
        fixed(maxOf("gateway_http") / maxOf(k)),
        fixed(p99RateOf("gateway_http") - p99RateOf(k), 3),
      ]),
    ));

    let allocation: Record<string, number> = {};
    if (flags.allocationRequests > 0) {
      // After the load runs, in processes of their own (GC tracing slows a process down).
      for (const item of started.splice(1).reverse()) await item.stop().catch(() => {});
      console.error("measuring the allocation per request ...");
      allocation = await allocationPerRequest(upstream.url, flags.allocationRequests, flags.rounds);
      printAllocation(allocation, flags);
    }

    const gatewayOverNginx = maxOf("gateway_http") / maxOf("nginx_proxy");
    const echoOverBare = maxOf("gateway_echo") / maxOf("bare");
    const p99Added = p99RateOf("gateway_http") - upstreamP99;
    const p99AddedDenoFetch = p99RateOf("deno_fetch") - upstreamP99;
    console.log("\n## Summary\n");
    const rows = [
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
      [
        "p99 added by the minimal Deno fetch proxy (ms), the runtime's own",
        fixed(p99AddedDenoFetch, 3),
        "",
        "",
      ],
      [
        "throughput gateway / minimal Deno fetch proxy",
        fixed(maxOf("gateway_http") / maxOf("deno_fetch")),
        ">= 1",
        verdict(maxOf("gateway_http") / maxOf("deno_fetch"), ">=", 1),
      ],
      [
        `throughput gateway ${cores} workers / 1 worker`,
        fixed(maxOf("gateway_workers") / maxOf("gateway_http")),
        `>= ${TARGETS.workersOverOne}`,
        verdict(maxOf("gateway_workers") / maxOf("gateway_http"), ">=", TARGETS.workersOverOne),
      ],
      [
        `throughput minimal Deno proxy ${cores} workers / 1 worker (the runtime's own)`,
        fixed(maxOf("minimal_workers") / maxOf("minimal_proxy")),
        "",
        "",
      ],
      [
        `p99 added at the fixed rate: gateway ${cores} workers (ms)`,
        fixed(p99RateOf("gateway_workers") - upstreamP99, 3),
        "",
        "",
      ],
      [
        "gateway RSS before / after the load runs (MiB)",
        `${fixed(rssBefore / 2 ** 20, 1)} / ${fixed(rssAfter / 2 ** 20, 1)}`,
        "",
        "",
      ],
    ];
    if (allocation.gateway_http !== undefined) {
      rows.push([
        "V8 heap allocated per gateway http request (bytes)",
        fixed(allocation.gateway_http, 0),
        `<= ${TARGETS.gatewayBytesPerRequest}`,
        verdict(allocation.gateway_http, "<=", TARGETS.gatewayBytesPerRequest),
      ], [
        "V8 heap allocated per request, minimal proxy with our client (bytes)",
        fixed(allocation.minimal_proxy, 0),
        `<= ${TARGETS.clientBytesPerRequest}`,
        verdict(allocation.minimal_proxy, "<=", TARGETS.clientBytesPerRequest),
      ], [
        "our HTTP/1.1 client's share: minimal proxy over a proxy's floor (bytes)",
        fixed(allocation.minimal_proxy - allocation.raw_fields_floor, 0),
        `<= ${TARGETS.clientShareBytesPerRequest}`,
        verdict(
          allocation.minimal_proxy - allocation.raw_fields_floor,
          "<=",
          TARGETS.clientShareBytesPerRequest,
        ),
      ], [
        "V8 heap allocated per request, Deno.serve + Deno.connect floor (bytes)",
        fixed(allocation.raw_floor, 0),
        "",
        "",
      ], [
        "the same + the request's fields and abort signal: a proxy's floor (bytes)",
        fixed(allocation.raw_fields_floor, 0),
        "",
        "",
      ]);
    }
    console.log(markdownTable(["measure", "result", "target", "verdict"], rows));
    return {
      environment: env,
      flags,
      max: maxRuns,
      fixedRate: { rate, connections: flags.connections, results: rateRuns },
      medians: Object.fromEntries(
        targets.map((t) => [t.key, {
          maxRequestsPerSec: maxOf(t.key),
          fixedRateP99Ms: rateRuns[t.key] ? p99RateOf(t.key) : null,
        }]),
      ),
      allocationBytesPerRequest: allocation,
      ratios: { gatewayOverNginx, echoOverBare, p99AddedMs: p99Added },
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
