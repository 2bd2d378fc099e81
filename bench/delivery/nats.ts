/**
 * JetStream-backed vs file-backed delivery queues, side by side in one run
 * (`deno run -A bench/delivery/nats.ts [--messages 2000] [--rounds 3]`): one gateway with the
 * same HTTP pipeline queued three ways — the file store with fsync on (the default), the NATS
 * store on a single JetStream server (1 replica), and the NATS store on a 3-server JetStream
 * cluster with 3 replicas (Debian's nats-server on loopback, started here) — 32 senders, bodies
 * of 1 KiB, 512 KiB (inline in the stream) and 2 MiB (through the object store). Accepted/s is
 * the senders' view (202s), delivered/s counts until the upstream has every message. Each figure
 * is the median of `--rounds` rounds, taken in turn (file, nats R1, nats R3, then again), and the
 * ratio is to the file store of the same round set.
 */
import { parseArgs } from "node:util";
import { freePort, removeDir, startGateway, tempDir } from "../../tests/support/mod.ts";
import { startNats } from "../../tests/support/nats.ts";
import { fixed, markdownTable } from "../http_proxy/report.ts";

const flags = parseArgs({
  options: {
    messages: { type: "string", default: "2000" },
    rounds: { type: "string", default: "3" },
  },
}).values;
const MESSAGES = Number(flags.messages);
const ROUNDS = Math.max(1, Number(flags.rounds));
const SENDERS = 32;

let delivered = 0;
const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  await req.arrayBuffer();
  delivered++;
  return new Response("ok");
});
const dir = await tempDir("bench-delivery-nats-");
const single = await startNats({ size: 1 });
const cluster = await startNats({ size: 3 });

const STORES = [
  { name: "file", label: "file, fsync on", queue: `dir = "${dir}/file"` },
  {
    name: "natsr1",
    label: "JetStream, 1 server, R1",
    queue: `store = "nats"\nnats_servers = ${JSON.stringify(single.servers)}\nnats_replicas = 1`,
  },
  {
    name: "natsr3",
    label: "JetStream, 3 servers, R3",
    queue: `store = "nats"\nnats_servers = ${JSON.stringify(cluster.servers)}\nnats_replicas = 3`,
  },
];

function config(port: number, mgmt: number): string {
  return `[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${mgmt}
[logging]
level = "warn"
` + STORES.map((s) => `
[endpoints.${s.name}]
service = "http"
[endpoints.${s.name}.options]
path_prefix = "/${s.name}"
[backends.${s.name}]
service = "http"
[backends.${s.name}.options]
base_url = "http://127.0.0.1:${upstream.addr.port}"
[backends.${s.name}.queue]
ordering = "parallel"
concurrency = 16
max_bytes = 4294967296
${s.queue}
[pipelines.${s.name}]
endpoints = ["${s.name}"]
backends = ["${s.name}"]
`).join("");
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const port = freePort();
const gw = await startGateway({ configText: config(port, freePort()) });
const rows: string[][] = [];
try {
  for (
    const [label, size, count] of [
      ["1 KiB", 1024, MESSAGES],
      ["512 KiB", 512 * 1024, Math.ceil(MESSAGES / 8)],
      ["2 MiB", 2 * 1024 * 1024, Math.ceil(MESSAGES / 32)],
    ] as const
  ) {
    const body = new Uint8Array(size).fill(0x61);
    const accepted = new Map<string, number[]>();
    const done = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const store of STORES) {
        delivered = 0;
        let next = 0;
        const started = performance.now();
        await Promise.all(Array.from({ length: SENDERS }, async () => {
          while (next < count) {
            next++;
            const res = await fetch(`http://127.0.0.1:${port}/${store.name}/m`, {
              method: "POST",
              body,
            });
            await res.body?.cancel();
            if (res.status !== 202) throw new Error(`${store.name}: ${res.status}`);
          }
        }));
        const acceptedMs = performance.now() - started;
        while (delivered < count) await new Promise((r) => setTimeout(r, 5));
        const deliveredMs = performance.now() - started;
        accepted.set(store.name, [...accepted.get(store.name) ?? [], count / (acceptedMs / 1000)]);
        done.set(store.name, [...done.get(store.name) ?? [], count / (deliveredMs / 1000)]);
      }
    }
    const reference = median(accepted.get("file")!);
    for (const store of STORES) {
      const a = median(accepted.get(store.name)!);
      rows.push([
        label,
        store.label,
        fixed(a, 0),
        fixed(a / reference, 2),
        fixed(median(done.get(store.name)!), 0),
      ]);
    }
  }
  console.log(
    `\n${SENDERS} senders; ${MESSAGES} messages of 1 KiB, ${Math.ceil(MESSAGES / 8)} of 512 KiB, ` +
      `${Math.ceil(MESSAGES / 32)} of 2 MiB; medians of ${ROUNDS} rounds:\n`,
  );
  console.log(
    markdownTable(["body", "queue store", "accepted/s", "vs file", "delivered/s"], rows),
  );
} finally {
  await gw.stop();
  await upstream.shutdown();
  await single.stop();
  await cluster.stop();
  await removeDir(dir);
}
