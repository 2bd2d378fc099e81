/**
 * The cost of a transform inside the gateway: requests/s of an `http` pipeline POSTing a ~2 KiB
 * JSON body to an nginx upstream, without middleware and with the synthetic 20-rule shift on the
 * way in. Target: the transform costs under 15% of the gateway's throughput.
 *
 * Two reference rows show what any transform costs before it does anything: `identity` is a shift
 * that copies the whole body (`{"@": ""}`: scan and rewrite on the raw JSON path) and
 * `identity-parsed` is the same followed by an empty `remove`, which forces the parsed path
 * (JSON.parse and JSON.stringify). `shift-parsed` is the 20-rule shift on the parsed path.
 *
 * The pipelines run in alternating rounds and each is reported by its median round, with the
 * gateway's CPU time per request (from /proc), which varies less than req/s on a shared machine.
 *
 * Rounds are short and many: on a shared machine a single round's ratio moves by ten points or
 * more, and the spread of a median shrinks with the square root of the rounds (nine 3-second
 * rounds: about a quarter less than five 4-second ones, for a third more time).
 *
 *   deno run -A bench/jolt/gateway.ts [--duration 3] [--rounds 9] [--connections 64]
 */
import { parseArgs } from "node:util";
import { startUpstream } from "../http_proxy/servers.ts";
import { runWrk } from "../http_proxy/wrk.ts";
import { fixed, markdownTable, verdict } from "../http_proxy/report.ts";
import { freePort, startGateway } from "../../tests/support/mod.ts";
import { synthetic } from "./main.ts";

const TARGET_COST = 0.15;

/** Pipeline name -> its middleware's spec file (none for `plain`). */
const PIPELINES: Record<string, string | null> = {
  "plain": null,
  "identity": "identity.json",
  "identity-parsed": "identity_parsed.json",
  "shift": "synthetic.json",
  "shift-parsed": "synthetic_parsed.json",
};

/** A gateway config with one pipeline per entry of PIPELINES, each under `/<name>`. */
function config(dataPort: number, mgmtPort: number, dir: string, upstream: string): string {
  let text = `transforms_path = "${dir}"
[network.main]
bind = "127.0.0.1"
port = ${dataPort}
[management]
port = ${mgmtPort}
[logging]
level = "warn"
[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstream}"
`;
  for (const [name, spec] of Object.entries(PIPELINES)) {
    if (spec) {
      text += `[middleware.${name}]
type = "transform"
[middleware.${name}.options]
spec_path = "${spec}"
`;
    }
    text += `[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[pipelines.${name}]
endpoints = ["${name}"]
middleware = ${JSON.stringify(spec ? [name] : [])}
backends = ["up"]
`;
  }
  return text;
}

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      duration: { type: "string", default: "3" },
      rounds: { type: "string", default: "9" },
      connections: { type: "string", default: "64" },
    },
  });
  const durationSec = Number(values.duration);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  const dir = await Deno.makeTempDir({ prefix: "jolt-bench-" });
  const { input, spec } = synthetic();
  const body = JSON.stringify(input);
  const identity = [{ operation: "shift", spec: { "@": "" } }];
  const parsed = (s: unknown[]) => [...s, { operation: "remove", spec: {} }];
  await Deno.writeTextFile(`${dir}/synthetic.json`, JSON.stringify(spec));
  await Deno.writeTextFile(`${dir}/synthetic_parsed.json`, JSON.stringify(parsed(spec)));
  await Deno.writeTextFile(`${dir}/identity.json`, JSON.stringify(identity));
  await Deno.writeTextFile(`${dir}/identity_parsed.json`, JSON.stringify(parsed(identity)));
  await Deno.writeTextFile(`${dir}/body.json`, body);
  const upstream = await startUpstream('{"ok":true}');
  const dataPort = freePort();
  const gateway = await startGateway({
    configText: config(dataPort, freePort(), dir, upstream.url),
  });
  const script = new URL("./post_body.lua", import.meta.url).pathname;
  const wrk = (name: string, seconds: number) =>
    runWrk({
      url: `http://127.0.0.1:${dataPort}/${name}/orders`,
      threads: 2,
      connections,
      durationSec: seconds,
      script,
      scriptArgs: [`${dir}/body.json`],
    });
  try {
    const names = Object.keys(PIPELINES);
    const rps: Record<string, number[]> = {};
    const cpu: Record<string, number[]> = {};
    const p99: Record<string, number[]> = {};
    for (const name of names) {
      const check = await fetch(`http://127.0.0.1:${dataPort}/${name}/orders`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      });
      await check.body?.cancel();
      if (check.status !== 200) {
        throw new Error(`${name}: status ${check.status}\n${gateway.output()}`);
      }
      await wrk(name, 2); // warm-up
      rps[name] = [];
      cpu[name] = [];
      p99[name] = [];
    }
    for (let round = 0; round < rounds; round++) {
      for (const name of names) {
        const before = cpuSeconds(gateway.pid);
        const r = await wrk(name, durationSec);
        const used = cpuSeconds(gateway.pid) - before;
        if (r.non2xx || r.socketErrors) {
          throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.socketErrors} socket errors`);
        }
        rps[name].push(r.requestsPerSec);
        cpu[name].push((used * 1e6) / r.requests);
        p99[name].push(r.p99Ms);
      }
    }
    const plainRps = median(rps.plain);
    const plainCpu = median(cpu.plain);
    const rows = names.map((name) => [
      name,
      fixed(median(rps[name]), 0),
      fixed(median(p99[name])),
      fixed(median(cpu[name]), 1),
      name === "plain" ? "" : `${fixed((1 - median(rps[name]) / plainRps) * 100, 1)}%`,
      name === "plain" ? "" : `${fixed((1 - plainCpu / median(cpu[name])) * 100, 1)}%`,
    ]);
    console.log(
      `gateway http pipeline, POST of a ${body.length}-byte JSON body, wrk -t2 -c${connections}, ` +
        `${rounds} alternating rounds of ${durationSec}s, medians\n`,
    );
    console.log(
      markdownTable(
        ["pipeline", "req/s", "p99 ms", "CPU µs/req", "throughput cost", "CPU cost"],
        rows,
      ),
    );
    // Each round's own ratio too: a spread within the run is noise between rounds, while runs
    // that differ with tight rounds point at the gateway process (each run starts a new one).
    const perRound = rps.shift.map((r, i) => `${fixed((1 - r / rps.plain[i]) * 100, 1)}%`);
    console.log(`\nshift cost by round: ${perRound.join(" ")}`);
    const cost = 1 - median(rps.shift) / plainRps;
    console.log(
      `\ntransform cost: ${(cost * 100).toFixed(1)}% of throughput (target < ${
        TARGET_COST * 100
      }%): ${verdict(cost, "<", TARGET_COST)}`,
    );
  } finally {
    await gateway.stop();
    await upstream.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
