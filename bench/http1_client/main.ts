/**
 * Measures Http1Client against `fetch` in a bare `Deno.serve` proxy in front of nginx:
 * throughput with wrk, and the proxy's peak RSS growth while streaming a 100 MiB download.
 * Run: `deno run -A bench/http1_client/main.ts [--duration 5] [--warmup 2] [--rounds 3]`.
 * Needs Debian's nginx and wrk. Not part of the test suite.
 */

import { runWrk, type WrkResult } from "../http_proxy/wrk.ts";
import {
  canConnect,
  type CapturedProcess,
  freePort,
  type NginxProcess,
  peakRssOf,
  REPO_ROOT,
  resetPeakRss,
  rssOf,
  runCommand,
  spawnCaptured,
  startNginx,
  waitReady,
} from "../../tests/support/mod.ts";

const MIB = 1024 * 1024;
const BIG_BYTES = 100 * MIB;
const WARM_BYTES = 1 * MIB;
const THREADS = 2;
const CONNECTIONS = 64;

type ClientKind = "fetch" | "http1";

/** The value of `--name` (a number), or `fallback`. */
function numberFlag(name: string, fallback: number): number {
  const index = Deno.args.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(Deno.args[index + 1]);
}

/** A 1 KiB JSON document, as in bench/http_proxy. */
function jsonBody(): string {
  const items: string[] = [];
  let text = "";
  for (let i = 0; text.length < 1000; i++) {
    items.push(`{"id":${i},"name":"item-${i}"}`);
    text = `{"items":[${items.join(",")}]}`;
  }
  return text.padEnd(1024, " ");
}

/** nginx serving the JSON at `/` and static files at `/files/` (keep-alive without a limit). */
async function startUpstream(body: string): Promise<NginxProcess> {
  const nginx = await startNginx({
    conf: `server {
    listen 127.0.0.1:{{port}} backlog=4096;
    keepalive_requests 1000000;
    location / {
      default_type application/json;
      return 200 '${body}';
    }
    location /files/ {
      alias {{dir}}/files/;
    }
  }`,
  });
  await Deno.mkdir(`${nginx.dir}/files`);
  await writeFile(`${nginx.dir}/files/big.bin`, BIG_BYTES);
  await writeFile(`${nginx.dir}/files/warm.bin`, WARM_BYTES);
  return nginx;
}

async function writeFile(path: string, size: number): Promise<void> {
  const file = await Deno.open(path, { write: true, create: true });
  try {
    const chunk = new Uint8Array(MIB);
    for (let written = 0; written < size; written += chunk.length) {
      crypto.getRandomValues(chunk.subarray(0, 65536));
      chunk.copyWithin(65536, 0, MIB - 65536);
      await file.write(chunk);
    }
  } finally {
    file.close();
  }
}

/** nginx `proxy_pass` with an upstream keepalive pool: the throughput we compare against. */
function startNginxProxy(upstreamPort: number): Promise<NginxProcess> {
  return startNginx({
    conf: `upstream up {
    server 127.0.0.1:${upstreamPort};
    keepalive 128;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:{{port}} backlog=4096;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`,
  });
}

/** bench/http_proxy/minimal_proxy.ts as a child process (malloc returns big blocks to the OS, as in production). */
async function startProxy(
  kind: ClientKind,
  upstream: string,
): Promise<{ url: string; process: CapturedProcess }> {
  const port = freePort();
  const process = spawnCaptured(Deno.execPath(), [
    "run",
    "-A",
    "--unstable-no-legacy-abort",
    "bench/http_proxy/minimal_proxy.ts",
    "--client",
    kind,
    "--upstream",
    upstream,
    "--port",
    String(port),
  ], {
    cwd: REPO_ROOT,
    env: { MALLOC_MMAP_THRESHOLD_: "65536", DENO_NO_UPDATE_CHECK: "1" },
  });
  await waitReady(process, {
    name: `${kind} proxy`,
    check: () => canConnect(port),
    description: `it listened on 127.0.0.1:${port}`,
    timeoutMs: 30_000,
  });
  return { url: `http://127.0.0.1:${port}`, process };
}

/** Fails unless `url` answers 200 with exactly `body`. */
async function checkAnswer(name: string, url: string, body: string): Promise<void> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200 || text !== body) {
    throw new Error(
      `${name} answered ${res.status} with ${text.length} bytes, not the upstream body`,
    );
  }
}

/** User + system CPU time of process `pid` in clock ticks (/proc/<pid>/stat fields 14 and 15). */
function cpuTicks(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** One measured wrk run, plus the CPU time `pid` spent per request (when given). */
interface Measured {
  wrk: WrkResult;
  cpuUsPerRequest: number | null;
}

/** A warm-up wrk run (unrecorded), then the measured one. */
async function measure(
  url: string,
  durationSec: number,
  warmupSec: number,
  pid: number | null,
  ticksPerSec: number,
): Promise<Measured> {
  const options = { url, threads: THREADS, connections: CONNECTIONS };
  if (warmupSec > 0) await runWrk({ ...options, durationSec: warmupSec });
  const before = pid === null ? 0 : cpuTicks(pid);
  const wrk = await runWrk({ ...options, durationSec });
  const cpuUsPerRequest = pid === null
    ? null
    : ((cpuTicks(pid) - before) / ticksPerSec) * 1e6 / wrk.requests;
  return { wrk, cpuUsPerRequest };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Downloads `url` through the proxy and reports the proxy's RSS growth over its baseline. */
async function memoryRun(kind: ClientKind, upstream: string): Promise<string[]> {
  const proxy = await startProxy(kind, upstream);
  try {
    const pid = proxy.process.child.pid;
    // Warm-up: JIT, pools and a 1 MiB stream, so the baseline is the steady state.
    for (let i = 0; i < 200; i++) await (await fetch(`${proxy.url}/`)).arrayBuffer();
    await (await fetch(`${proxy.url}/files/warm.bin`)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const baseline = rssOf(pid);
    const peakReset = resetPeakRss(pid);
    let sampled = baseline;
    const sampler = setInterval(() => sampled = Math.max(sampled, rssOf(pid)), 20);
    const started = performance.now();
    let bytes = 0;
    try {
      const res = await fetch(`${proxy.url}/files/big.bin`);
      for await (const chunk of res.body!) bytes += chunk.length;
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - started) / 1000;
    if (bytes !== BIG_BYTES) {
      throw new Error(`${kind} proxy delivered ${bytes} of ${BIG_BYTES} bytes`);
    }
    // VmHWM is the true peak when clear_refs reset it at the baseline; else use the samples.
    const peak = peakReset ? Math.max(peakRssOf(pid), sampled) : sampled;
    const after = rssOf(pid);
    return [
      kind,
      (baseline / MIB).toFixed(1),
      (peak / MIB).toFixed(1),
      ((peak - baseline) / MIB).toFixed(1),
      (after / MIB).toFixed(1),
      (BIG_BYTES / MIB / seconds).toFixed(0),
      peakReset ? "VmHWM" : "sampled VmRSS",
    ];
  } finally {
    await proxy.process.stop();
  }
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    `| ${
      cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")
    } |`;
  const rule = `| ${
    widths.map((w, i) => (i === 0 ? "-".repeat(w) : "-".repeat(w - 1) + ":")).join(" | ")
  } |`;
  return [line(header), rule, ...rows.map(line)].join("\n");
}

async function main(): Promise<void> {
  const durationSec = numberFlag("duration", 5);
  const warmupSec = numberFlag("warmup", 2);
  const rounds = numberFlag("rounds", 3);
  const body = jsonBody();
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const upstream = await startUpstream(body);
    stops.push(upstream.stop);
    const nginxProxy = await startNginxProxy(upstream.port);
    stops.push(nginxProxy.stop);
    const fetchProxy = await startProxy("fetch", upstream.url);
    stops.push(fetchProxy.process.stop);
    const http1Proxy = await startProxy("http1", upstream.url);
    stops.push(http1Proxy.process.stop);

    const targets: [string, string, number | null][] = [
      ["nginx upstream (direct)", upstream.url, null],
      ["nginx proxy_pass", nginxProxy.url, null],
      ["Deno.serve + fetch", fetchProxy.url, fetchProxy.process.child.pid],
      ["Deno.serve + Http1Client", http1Proxy.url, http1Proxy.process.child.pid],
    ];
    for (const [name, url] of targets) await checkAnswer(name, `${url}/`, body);
    const ticksPerSec = Number((await runCommand("getconf", ["CLK_TCK"])).stdout.trim()) || 100;

    console.log(
      `wrk -t${THREADS} -c${CONNECTIONS} -d${durationSec}s --latency <url>/ ` +
        `(each after a ${warmupSec} s unrecorded warm-up; ${rounds} rounds, targets interleaved; ` +
        `median run shown), 1 KiB JSON from nginx, ${navigator.hardwareConcurrency} CPUs, ` +
        `Deno ${Deno.version.deno}\n`,
    );
    const runs = new Map<string, Measured[]>(targets.map(([name]) => [name, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const [name, url, pid] of targets) {
        const result = await measure(`${url}/`, durationSec, warmupSec, pid, ticksPerSec);
        runs.get(name)!.push(result);
        console.error(`  round ${round}: ${name}: ${result.wrk.requestsPerSec.toFixed(0)} req/s`);
      }
    }
    const medians = new Map<string, Measured>();
    for (const [name, list] of runs) {
      const mid = median(list.map((run) => run.wrk.requestsPerSec));
      medians.set(name, list.find((run) => run.wrk.requestsPerSec === mid)!);
    }
    console.log(table(
      ["target", "req/s", "min-max req/s", "p50 ms", "p99 ms", "errors", "proxy CPU us/req"],
      [...medians].map(([name, { wrk, cpuUsPerRequest }]) => {
        const all = runs.get(name)!.map((run) => run.wrk.requestsPerSec);
        return [
          name,
          wrk.requestsPerSec.toFixed(0),
          `${Math.min(...all).toFixed(0)}-${Math.max(...all).toFixed(0)}`,
          wrk.p50Ms.toFixed(3),
          wrk.p99Ms.toFixed(3),
          String(
            runs.get(name)!.reduce((sum, run) => sum + run.wrk.socketErrors + run.wrk.non2xx, 0),
          ),
          cpuUsPerRequest === null ? "-" : cpuUsPerRequest.toFixed(1),
        ];
      }),
    ));
    const rps = (name: string) => medians.get(name)!.wrk.requestsPerSec;
    const ratio = (a: string, b: string) => (rps(a) / rps(b)).toFixed(2);
    console.log();
    console.log(table(["ratio (medians)", "value"], [
      ["Http1Client / fetch", ratio("Deno.serve + Http1Client", "Deno.serve + fetch")],
      [
        "Http1Client / nginx proxy_pass (target >= 0.6)",
        ratio("Deno.serve + Http1Client", "nginx proxy_pass"),
      ],
      ["fetch / nginx proxy_pass", ratio("Deno.serve + fetch", "nginx proxy_pass")],
    ]));

    for (const stop of stops.splice(2)) await stop();
    console.log(
      `\n100 MiB download through each proxy (fresh child process, MALLOC_MMAP_THRESHOLD_=65536, ` +
        `after a warm-up of 200 small requests and one 1 MiB download):\n`,
    );
    const rows = [];
    for (const kind of ["fetch", "http1"] as const) rows.push(await memoryRun(kind, upstream.url));
    console.log(table(
      ["client", "baseline MiB", "peak MiB", "growth MiB", "after MiB", "MiB/s", "peak from"],
      rows,
    ));
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

if (import.meta.main) await main();
