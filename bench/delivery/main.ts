/**
 * Durable delivery throughput (`deno run -A bench/delivery/main.ts [--messages 2000]`), in one
 * run against one local upstream: 1 KiB bodies and 512 KiB bodies (the size of a CT instance) through
 * the same pipeline without a queue (each request waits for the upstream), with a queue and fsync
 * on, and with fsync off; accepted messages/s (the sender's view: 202s) and delivered messages/s
 * (until the queue is empty), 32 senders at once. 512 KiB runs send a quarter of the messages.
 */
import { parseArgs } from "node:util";
import { freePort, removeDir, startGateway, tempDir } from "../../tests/support/mod.ts";
import { fixed, markdownTable } from "../http_proxy/report.ts";

const flags = parseArgs({ options: { messages: { type: "string", default: "2000" } } }).values;
const MESSAGES = Number(flags.messages);
const SENDERS = 32;

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
  for (
    const [label, size, count] of [["1 KiB", 1024, MESSAGES], [
      "512 KiB",
      512 * 1024,
      Math.ceil(MESSAGES / 4),
    ]] as const
  ) {
    const body = new Uint8Array(size).fill(0x61);
    for (const name of ["direct", "fsync", "nofsync"]) {
      delivered = 0;
      let next = 0;
      const started = performance.now();
      await Promise.all(Array.from({ length: SENDERS }, async () => {
        while (next < count) {
          next++;
          const res = await fetch(`http://127.0.0.1:${port}/${name}/m`, { method: "POST", body });
          await res.body?.cancel();
          if (res.status >= 300) throw new Error(`${name}: ${res.status}`);
        }
      }));
      const acceptedMs = performance.now() - started;
      while (delivered < count) await new Promise((r) => setTimeout(r, 5));
      const deliveredMs = performance.now() - started;
      rows.push([
        label,
        name === "direct" ? "no queue" : name === "fsync" ? "queue, fsync on" : "queue, fsync off",
        fixed(count / (acceptedMs / 1000), 0),
        fixed(count / (deliveredMs / 1000), 0),
      ]);
    }
  }
  console.log(
    `\n${SENDERS} senders; ${MESSAGES} messages of 1 KiB, ${Math.ceil(MESSAGES / 4)} of 512 KiB:\n`,
  );
  console.log(markdownTable(["body", "pipeline", "accepted/s", "delivered/s"], rows));
} finally {
  await gw.stop();
  await upstream.shutdown();
  await removeDir(dir);
}
