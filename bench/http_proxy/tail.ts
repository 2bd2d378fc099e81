/**
 * Where the gateway's tail latency comes from, at a fixed rate: the p99 that wrk sees next to the
 * event loop's delays (a 1 ms timer in the gateway's thread, how late each tick fired) and V8's
 * garbage collections (`--trace-gc-nvp`: every pause, by kind) over the same window.
 *
 * `deno run -A bench/http_proxy/tail.ts [--rate 5000] [--duration 10]`
 *
 * The gateway runs the bench's configuration (`http` pipeline to an nginx upstream with a 1 KiB
 * JSON body, one worker) in a child process started from this file (`--serve`), through the
 * embedding API, with the gateway's runtime flags (2 MiB semi-space) and the GC trace.
 */
import { parseArgs } from "node:util";
import { startGateway } from "../../mod.ts";
import { canConnect, freePort, spawnCaptured, waitReady } from "../../tests/support/mod.ts";
import { GcTraceMeter } from "./allocation.ts";
import { fixedJsonBody } from "./report.ts";
import { gatewayConfig, startUpstream } from "./servers.ts";
import { runWrk } from "./wrk.ts";

/** Percentile `p` (0-100) of ascending `sorted`. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** What a list of pauses or delays looks like, in ms. */
interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
  over2: number;
  over5: number;
  over10: number;
}

function summarize(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? 0,
    total: sorted.reduce((a, b) => a + b, 0),
    over2: sorted.filter((v) => v > 2).length,
    over5: sorted.filter((v) => v > 5).length,
    over10: sorted.filter((v) => v > 10).length,
  };
}

/** The child: the gateway and the event-loop sampler; SIGUSR1 opens the window, SIGUSR2 reports. */
async function serve(port: number, upstream: string): Promise<void> {
  const gateway = await startGateway({
    config: { toml: gatewayConfig(port, freePort(), upstream, 1), name: "tail.toml" },
    workers: 1,
  });
  const delays: number[] = [];
  let expected = performance.now() + 1;
  const sampler = setInterval(() => {
    const now = performance.now();
    delays.push(Math.max(0, now - expected));
    expected = now + 1;
  }, 1);
  Deno.addSignalListener("SIGUSR1", () => delays.length = 0);
  Deno.addSignalListener("SIGUSR2", () => {
    // One short line (the GC trace shares stdout): the summary of the window.
    console.log(`LOOP ${JSON.stringify(summarize(delays))}`);
  });
  Deno.addSignalListener("SIGTERM", async () => {
    clearInterval(sampler);
    await gateway.shutdown();
    Deno.exit(0);
  });
}

/** The event-loop summary the child prints when asked (SIGUSR2), from its output lines. */
function loopSummary(line: string): Summary | undefined {
  const at = line.indexOf("LOOP {");
  if (at === -1) return undefined;
  try {
    return JSON.parse(line.slice(at + 5));
  } catch {
    return undefined; // cut by a line of the GC trace: reported as missing
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      serve: { type: "boolean", default: false },
      port: { type: "string" },
      upstream: { type: "string" },
      rate: { type: "string", default: "5000" },
      duration: { type: "string", default: "10" },
    },
  });
  if (values.serve) return await serve(Number(values.port), values.upstream!);

  const upstream = await startUpstream(fixedJsonBody(1024));
  const port = freePort();
  let loop: Summary | undefined;
  const gc = new GcTraceMeter((line) => loop ??= loopSummary(line));
  const child = spawnCaptured(Deno.execPath(), [
    "run",
    "-A",
    "--unstable-net",
    "--unstable-no-legacy-abort",
    "--v8-flags=--max-semi-space-size=2,--trace-gc-nvp",
    new URL(import.meta.url).pathname,
    "--serve",
    "--port",
    String(port),
    "--upstream",
    upstream.url,
  ], {
    env: { GATEWAY_MANAGEMENT_TOKEN: "tail-bench-token-0123456789abcdef0123456789" },
    onStdout: gc.feed,
  });
  try {
    await waitReady(child, {
      name: "gateway",
      check: () => canConnect(port),
      description: "listening",
      timeoutMs: 60_000,
    });
    const rate = Number(values.rate);
    const durationSec = Number(values.duration);
    const script = {
      script: new URL("./fixed_rate.lua", import.meta.url).pathname,
      scriptArgs: [String(rate), "2"],
    };
    const url = `http://127.0.0.1:${port}/api/`;
    await runWrk({ url, threads: 2, connections: 64, durationSec: 2, ...script });
    Deno.kill(child.child.pid, "SIGUSR1");
    gc.open();
    const result = await runWrk({ url, threads: 2, connections: 64, durationSec, ...script });
    gc.close();
    Deno.kill(child.child.pid, "SIGUSR2");
    for (let i = 0; i < 50 && !loop; i++) await new Promise((r) => setTimeout(r, 100));
    const scavenges = summarize(gc.pauses.filter((p) => p.kind === "s").map((p) => p.ms));
    const others = summarize(gc.pauses.filter((p) => p.kind !== "s").map((p) => p.ms));
    const row = (name: string, x: Summary) =>
      `| ${name} | ${x.count} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${
        x.max.toFixed(2)
      } | ` +
      `${x.over2} / ${x.over5} / ${x.over10} | ${x.total.toFixed(0)} |`;
    console.log(
      `\n${rate} req/s for ${durationSec} s: wrk p50 ${result.p50Ms.toFixed(2)} ms, p99 ${
        result.p99Ms.toFixed(2)
      } ms, ` +
        `${result.requestsPerSec.toFixed(0)} req/s achieved\n`,
    );
    console.log("| what | count | p50 ms | p99 ms | max ms | over 2 / 5 / 10 ms | total ms |");
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    console.log(row("scavenges (young generation)", scavenges));
    console.log(row("other collections (mark-compact, incremental steps)", others));
    if (loop) console.log(row("event-loop delay (1 ms timer, how late)", loop));
    else console.log("(the event-loop summary did not arrive)");
  } finally {
    await child.stop();
    await upstream.stop();
  }
}

if (import.meta.main) await main();
