/**
 * The cost of a transform inside the gateway: requests/s of an `http` pipeline POSTing a ~2 KiB
 * JSON body to an nginx upstream, without middleware and with the synthetic 20-rule shift on the
 * way in, in one run. Target: the transform costs under 15% of the gateway's throughput.
 *
 *   deno run -A bench/jolt/gateway.ts [--duration 10] [--connections 64]
 */
import { parseArgs } from "node:util";
import { startUpstream } from "../http_proxy/servers.ts";
import { runWrk } from "../http_proxy/wrk.ts";
import { fixed, markdownTable, verdict } from "../http_proxy/report.ts";
import { freePort, startGateway } from "../../tests/support/mod.ts";
import { synthetic } from "./main.ts";

const TARGET_COST = 0.15;

/** A gateway config with `/plain` (no middleware) and `/shift` (the 20-rule shift). */
function config(dataPort: number, mgmtPort: number, dir: string, upstream: string): string {
  const pipeline = (name: string, middleware: string[]) => `
[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[pipelines.${name}]
endpoints = ["${name}"]
middleware = ${JSON.stringify(middleware)}
backends = ["up"]
`;
  return `transforms_path = "${dir}"
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
[middleware.shift]
type = "transform"
[middleware.shift.options]
spec_path = "synthetic.json"
${pipeline("plain", [])}${pipeline("shift", ["shift"])}`;
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "64" },
    },
  });
  const durationSec = Number(values.duration);
  const connections = Number(values.connections);
  const dir = await Deno.makeTempDir({ prefix: "jolt-bench-" });
  const { input, spec } = synthetic();
  const body = JSON.stringify(input);
  await Deno.writeTextFile(`${dir}/synthetic.json`, JSON.stringify(spec));
  await Deno.writeTextFile(`${dir}/body.json`, body);
  const upstream = await startUpstream('{"ok":true}');
  const dataPort = freePort();
  const gateway = await startGateway({
    configText: config(dataPort, freePort(), dir, upstream.url),
  });
  try {
    const rows: string[][] = [];
    const rps: Record<string, number> = {};
    for (const name of ["plain", "shift"]) {
      const url = `http://127.0.0.1:${dataPort}/${name}/orders`;
      const check = await fetch(url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
      });
      await check.body?.cancel();
      if (check.status !== 200) {
        throw new Error(`${name}: status ${check.status}\n${gateway.output()}`);
      }
      const script = new URL("./post_body.lua", import.meta.url).pathname;
      await runWrk({
        url,
        threads: 2,
        connections,
        durationSec: 3,
        script,
        scriptArgs: [`${dir}/body.json`],
      });
      const r = await runWrk({
        url,
        threads: 2,
        connections,
        durationSec,
        script,
        scriptArgs: [`${dir}/body.json`],
      });
      if (r.non2xx || r.socketErrors) {
        throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.socketErrors} socket errors`);
      }
      rps[name] = r.requestsPerSec;
      rows.push([name, fixed(r.requestsPerSec, 0), fixed(r.p50Ms), fixed(r.p99Ms)]);
    }
    console.log(
      `gateway http pipeline, POST of a ${body.length}-byte JSON body, wrk -t2 -c${connections} -d${durationSec}s\n`,
    );
    console.log(markdownTable(["pipeline", "req/s", "p50 ms", "p99 ms"], rows));
    const cost = 1 - rps.shift / rps.plain;
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
