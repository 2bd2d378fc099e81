/**
 * Durable delivery throughput (`deno run -A bench/delivery/main.ts [--messages 2000]`), in one
 * run against one local upstream: 1 KiB bodies and 512 KiB bodies (the size of a CT instance) through
 * the same pipeline without a queue (each request waits for the upstream), with a queue and fsync
 * on, and with fsync off; accepted messages/s (the sender's view: 202s) and delivered messages/s
 * (until the queue is empty), 32 senders at once. 512 KiB runs send a quarter of the messages.
 * Then DICOM: DCMTK `storescu` sends 512 KiB instances (512×512, 16 bits) in one association to a
 * `dicom_scp` endpoint whose pipeline stores them into DCMTK `storescp` through a `dicom_scu`
 * backend, without and with a queue (fsync on): accepted/s is storescu's, delivered/s counts the
 * files storescp wrote.
 */
import { parseArgs } from "node:util";
import {
  findBinary,
  freePort,
  removeDir,
  runCommand,
  startGateway,
  tempDir,
} from "../../tests/support/mod.ts";
import { generateInstances } from "../../fixtures/dicom/generate.ts";
import { DCMTK_ENV, startStorescp } from "../../fixtures/dicom/peers.ts";
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
}

// DICOM: storescu -> dicom_scp -> dicom_scu -> storescp, without and with a queue.
if (!findBinary("storescu") || !findBinary("storescp")) {
  console.log("\nDICOM part skipped: DCMTK's storescu and storescp are not installed.");
} else {
  const count = Math.max(20, Math.ceil(MESSAGES / 10));
  const instances = await generateInstances(`${dir}/dicom`, {
    patientPrefix: "BENCHQ",
    studies: 1,
    seriesPerStudy: 1,
    instancesPerSeries: count,
    size: 512,
  });
  const dicomRows: string[][] = [];
  for (const queued of [false, true]) {
    const archive = await startStorescp({ aet: "ARCHIVE" });
    const scpPort = freePort();
    const gateway = await startGateway({
      configText: `[management]
bind = "127.0.0.1"
port = ${freePort()}
[logging]
level = "warn"
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GATEWAY"
bind_addr = "127.0.0.1"
port = ${scpPort}
enable_store = true
[backends.archive]
service = "dicom_scu"
timeout_secs = 30
[backends.archive.options]
aet = "ARCHIVE"
host = "127.0.0.1"
port = ${archive.port}
${queued ? `[backends.archive.queue]\ndir = "${dir}/dicom-queue"\n` : ""}
[pipelines.p]
endpoints = ["scp"]
backends = ["archive"]
`,
    });
    try {
      const started = performance.now();
      const sent = await runCommand(
        "storescu",
        [
          "-aet",
          "MODALITY",
          "-aec",
          "GATEWAY",
          "127.0.0.1",
          String(scpPort),
          ...instances.map((i) => i.path),
        ],
        { timeoutMs: 600_000, env: DCMTK_ENV },
      );
      if (sent.code !== 0) throw new Error(`storescu: ${sent.stderr}`);
      const acceptedMs = performance.now() - started;
      const written = () => [...Deno.readDirSync(archive.dir)].length;
      while (written() < count) await new Promise((r) => setTimeout(r, 10));
      const deliveredMs = performance.now() - started;
      dicomRows.push([
        queued ? "queue, fsync on" : "no queue",
        fixed(count / (acceptedMs / 1000), 1),
        fixed(count / (deliveredMs / 1000), 1),
      ]);
    } finally {
      await gateway.stop();
      await archive.stop();
    }
  }
  console.log(`\n${count} DICOM instances of 512 KiB, storescu -> gateway -> storescp:\n`);
  console.log(markdownTable(["pipeline", "accepted/s", "delivered/s"], dicomRows));
}
await removeDir(dir);
