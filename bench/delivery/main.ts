/**
 * Durable delivery throughput (`deno run -A bench/delivery/main.ts [--messages 2000]`), in one
 * run against one local upstream: 1 KiB HTTP bodies through the same pipeline without a queue
 * (each request waits for the upstream), with a queue and fsync on, and with fsync off; accepted
 * messages/s (the sender's view: 202s) and delivered messages/s (until the queue is empty), 32
 * senders at once.
 */
import { parseArgs } from "node:util";
import { freePort, removeDir, startGateway, tempDir } from "../../tests/support/mod.ts";
import { fixed, markdownTable } from "../http_proxy/report.ts";

const flags = parseArgs({ options: { messages: { type: "string", default: "2000" } } }).values;
const MESSAGES = Number(flags.messages);
const SENDERS = 32;
const BODY = new Uint8Array(1024).fill(0x61);

let delivered = 0;
const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  await req.arrayBuffer();
  delivered++;
  return new Response("ok");
});
const dir = await tempDir("bench-delivery-");

function config(port: number, mgmt: number): string {
  const pipeline = (name: string, queue: string) => `
[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[backends.${name}]
service = "http"
[backends.${name}.options]
base_url = "http://127.0.0.1:${upstream.addr.port}"
${queue}
[pipelines.${name}]
endpoints = ["${name}"]
backends = ["${name}"]
`;
  return `[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${mgmt}
[logging]
level = "warn"
` + pipeline("direct", "") +
    pipeline(
      "fsync",
      `[backends.fsync.queue]\ndir = "${dir}/fsync"\nordering = "parallel"\nconcurrency = 16`,
    ) +
    pipeline(
      "nofsync",
      `[backends.nofsync.queue]\ndir = "${dir}/nofsync"\nordering = "parallel"\nconcurrency = 16\nfsync = false`,
    );
}

const port = freePort();
const gw = await startGateway({ configText: config(port, freePort()) });
const rows: string[][] = [];
try {
  for (const name of ["direct", "fsync", "nofsync"]) {
    delivered = 0;
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: SENDERS }, async () => {
      while (next < MESSAGES) {
        next++;
        const res = await fetch(`http://127.0.0.1:${port}/${name}/m`, {
          method: "POST",
          body: BODY,
        });
        await res.body?.cancel();
        if (res.status >= 300) throw new Error(`${name}: ${res.status}`);
      }
    }));
    const acceptedMs = performance.now() - started;
    while (delivered < MESSAGES) await new Promise((r) => setTimeout(r, 5));
    const deliveredMs = performance.now() - started;
    rows.push([
      name === "direct" ? "no queue" : name === "fsync" ? "queue, fsync on" : "queue, fsync off",
      fixed(MESSAGES / (acceptedMs / 1000), 0),
      fixed(MESSAGES / (deliveredMs / 1000), 0),
    ]);
  }
  console.log(`\n${MESSAGES} messages of 1 KiB, ${SENDERS} senders:\n`);
  console.log(markdownTable(["pipeline", "accepted/s", "delivered/s"], rows));
} finally {
  await gw.stop();
  await upstream.shutdown();
  await removeDir(dir);
}
