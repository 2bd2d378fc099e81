/**
 * The cost of message tracking (`deno run -A bench/tracking/main.ts [--rounds 5] [--seconds 5]
 * [--body 1024] [--workers 1]`): one gateway process, three pipelines to the same local HTTP
 * upstream that differ only in tracking (off; on, metadata only; on, content of all four stages,
 * encrypted), loaded in turn by Debian's `wrk` (POST of a JSON body, 2 threads, 32 connections),
 * round after round; the table shows each one's median req/s and p99 over the rounds and the ratio
 * to "off" in the same run. Numbers in docs/operations.md ("Message tracking").
 */
import { parseArgs } from "node:util";
import { generateX25519Identity } from "age-encryption";
import { findBinary, freePort, removeDir, startGateway, tempDir } from "../../tests/support/mod.ts";
import { fixed, markdownTable, median } from "../http_proxy/report.ts";
import { runWrk, type WrkResult } from "../http_proxy/wrk.ts";

const flags = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    seconds: { type: "string", default: "5" },
    body: { type: "string", default: "1024" },
    workers: { type: "string", default: "1" },
  },
}).values;
const ROUNDS = Number(flags.rounds);
const SECONDS = Number(flags.seconds);
const BODY = Number(flags.body);

if (!findBinary("wrk")) throw new Error("bench/tracking needs Debian's wrk (apt-get install wrk)");

const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  await req.arrayBuffer();
  return Response.json({ ok: true });
});
const dir = await tempDir("bench-tracking-");
const identity = `${dir}/tracking.age`;
await Deno.writeTextFile(identity, `${await generateX25519Identity()}\n`, { mode: 0o600 });

const VARIANTS = [
  { name: "off", label: "tracking off", tracking: "" },
  { name: "meta", label: "tracking on, metadata", tracking: "[pipelines.meta.tracking]\n" },
  {
    name: "content",
    label: "tracking on, content (4 stages)",
    tracking:
      '[pipelines.content.tracking]\ncontent = ["received", "after_middleware", "backend_request", "backend_response"]\n',
  },
];

const port = freePort();
const config = `[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${freePort()}
[logging]
level = "warn"
[runtime]
workers = ${Number(flags.workers)}
[backends.up]
service = "http"
[backends.up.options]
base_url = "http://127.0.0.1:${upstream.addr.port}"
[tracking]
path = "${dir}/store"
identity_file = "${identity}"
` + VARIANTS.map((v) => `
[endpoints.${v.name}]
service = "http"
[endpoints.${v.name}.options]
path_prefix = "/${v.name}"
[pipelines.${v.name}]
endpoints = ["${v.name}"]
backends = ["up"]
${v.tracking}`).join("");

const gw = await startGateway({ configText: config });
const results = new Map<string, WrkResult[]>(VARIANTS.map((v) => [v.name, []]));
try {
  const load = (name: string, seconds: number) =>
    runWrk({
      url: `http://127.0.0.1:${port}/${name}/obs`,
      threads: 2,
      connections: 32,
      durationSec: seconds,
      script: new URL("./post.lua", import.meta.url).pathname,
      scriptArgs: [String(BODY)],
    });
  // Warm-up: each pipeline once (JIT, connection pools, the store's first pages).
  for (const v of VARIANTS) await load(v.name, 2);
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of VARIANTS) {
      const r = await load(v.name, SECONDS);
      if (r.non2xx || r.socketErrors) {
        throw new Error(`${v.name}: ${r.non2xx} non-2xx, ${r.socketErrors} socket errors`);
      }
      results.get(v.name)!.push(r);
    }
  }
  const status = await (await gw.mgmtFetch("/admin/tracking")).json();
  const base = median(results.get("off")!.map((r) => r.requestsPerSec));
  const baseP99 = median(results.get("off")!.map((r) => r.p99Ms));
  const rows = VARIANTS.map((v) => {
    const rps = median(results.get(v.name)!.map((r) => r.requestsPerSec));
    const p99 = median(results.get(v.name)!.map((r) => r.p99Ms));
    return [
      v.label,
      fixed(rps, 0),
      fixed(rps / base, 2),
      fixed(median(results.get(v.name)!.map((r) => r.p50Ms)), 2),
      fixed(p99, 2),
      fixed(p99 / baseP99, 2),
    ];
  });
  console.log(
    `\n${BODY}-byte JSON POSTs, wrk 2 threads × 32 connections, ${ROUNDS} rounds of ${SECONDS} s ` +
      `per variant (medians), ${flags.workers} data-plane isolate(s):\n`,
  );
  console.log(
    markdownTable(["pipeline", "req/s", "× off", "p50 ms", "p99 ms", "p99 × off"], rows),
  );
  console.log(
    `\nStore: ${status.records} records, ${(status.bytes / 1048576).toFixed(1)} MiB, ` +
      `${status.dropped} dropped.`,
  );
} finally {
  await gw.stop();
  await upstream.shutdown();
  await removeDir(dir);
}
