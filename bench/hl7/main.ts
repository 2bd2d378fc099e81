/**
 * HL7 v2 throughput (`deno run -A bench/hl7/main.ts [--messages 5000] [--connections 8]
 * [--rounds 3]`), in one run against one receiver, `@medplum/hl7`'s Hl7Server (the npm server):
 * - direct: the sender's MLLP connections straight to the Hl7Server (the npm server's own receive
 *   rate, the reference);
 * - gateway, MLLP: the same sender to a gateway process's `hl7` endpoint, whose pipeline's `hl7`
 *   backend sends each message on to the Hl7Server (pool_size = connections) and answers with its
 *   ACK;
 * - gateway, HTTP bridge: the same messages POSTed as `x-application/hl7-v2+er7` to an `http`
 *   endpoint of that gateway, same backend;
 * - gateway, MLLP, fifo queue: the sender to another `hl7` endpoint whose `hl7` backend has a
 *   durable `fifo` queue (fsync on): answered once on disk, delivered one at a time.
 * Each sender sends one message at a time and waits for its ACK (AA checked, with the message's
 * control id). Rounds alternate the order; the table gives the median round's messages/s as the
 * sender saw them answered and as the receiver got them, and the ratio to direct.
 */
import { parseArgs } from "node:util";
import { freePort, removeDir, startGateway, tempDir } from "../../tests/support/mod.ts";
import { startHl7Receiver } from "../../tests/support/hl7_receiver.ts";
import { fixed, markdownTable, median } from "../http_proxy/report.ts";
import { benchMessage, sendHttp, sendMllp } from "./sender.ts";

const flags = parseArgs({
  options: {
    messages: { type: "string", default: "5000" },
    connections: { type: "string", default: "8" },
    rounds: { type: "string", default: "3" },
  },
}).values;
const MESSAGES = Number(flags.messages);
const CONNECTIONS = Number(flags.connections);
const ROUNDS = Number(flags.rounds);

const receiver = await startHl7Receiver();
const mllpPort = freePort();
const queuedPort = freePort();
const queueDir = await tempDir("bench-hl7-queue-");
const httpPort = freePort();
const gateway = await startGateway({
  configText: `
[network.main]
bind = "127.0.0.1"
port = ${httpPort}
[management]
bind = "127.0.0.1"
port = ${freePort()}
[logging]
level = "warn"

[endpoints.mllp_in]
service = "hl7"
[endpoints.mllp_in.options]
bind_addr = "127.0.0.1"
port = ${mllpPort}

[endpoints.http_in]
service = "http"
[endpoints.http_in.options]
path_prefix = "/hl7"

[backends.receiver]
service = "hl7"
[backends.receiver.options]
host = "127.0.0.1"
port = ${receiver.port}
pool_size = ${CONNECTIONS}

[pipelines.hl7]
endpoints = ["mllp_in", "http_in"]
backends = ["receiver"]

[endpoints.mllp_queued]
service = "hl7"
[endpoints.mllp_queued.options]
bind_addr = "127.0.0.1"
port = ${queuedPort}

[backends.queued]
service = "hl7"
[backends.queued.options]
host = "127.0.0.1"
port = ${receiver.port}
[backends.queued.queue]
dir = "${queueDir}"
ordering = "fifo"
fsync = true

[pipelines.queued]
endpoints = ["mllp_queued"]
backends = ["queued"]
`,
});

type Path = "direct" | "gateway, MLLP" | "gateway, HTTP bridge" | "gateway, MLLP, fifo queue";
const PATHS: Path[] = [
  "direct",
  "gateway, MLLP",
  "gateway, HTTP bridge",
  "gateway, MLLP, fifo queue",
];

/**
 * Messages/s of one run: `accepted` as the sender saw it (all ACKs back), `delivered` until the
 * receiver had them all (the same but for the queue, which answers once a message is on disk).
 */
async function run(
  path: Path,
  count: number,
  prefix: string,
): Promise<{ accepted: number; delivered: number }> {
  receiver.messages.length = 0;
  receiver.controlIds.length = 0;
  const started = performance.now();
  const ms = path === "direct"
    ? await sendMllp(receiver.port, count, CONNECTIONS, prefix)
    : path === "gateway, MLLP"
    ? await sendMllp(mllpPort, count, CONNECTIONS, prefix)
    : path === "gateway, HTTP bridge"
    ? await sendHttp(`http://127.0.0.1:${httpPort}/hl7/adt`, count, CONNECTIONS, prefix)
    : await sendMllp(queuedPort, count, CONNECTIONS, prefix);
  await receiver.received(count);
  const all = performance.now() - started;
  if (receiver.messages.length !== count) {
    throw new Error(`${path}: the receiver got ${receiver.messages.length} of ${count}`);
  }
  return { accepted: count / (ms / 1000), delivered: count / (all / 1000) };
}

const rates = new Map<Path, { accepted: number[]; delivered: number[] }>(
  PATHS.map((p) => [p, { accepted: [], delivered: [] }]),
);
try {
  // Warm-up: connections opened, code compiled.
  for (const path of PATHS) await run(path, 200, `W${PATHS.indexOf(path)}-`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? PATHS : [...PATHS].reverse();
    for (const path of order) {
      const rate = await run(path, MESSAGES, `R${round}${PATHS.indexOf(path)}-`);
      rates.get(path)!.accepted.push(rate.accepted);
      rates.get(path)!.delivered.push(rate.delivered);
      console.error(
        `round ${round + 1}: ${path}: ${fixed(rate.accepted, 0)} messages/s answered, ` +
          `${fixed(rate.delivered, 0)} delivered`,
      );
    }
  }
  console.error(`connections the receiver accepted in all: ${receiver.connections}`);
} finally {
  await gateway.stop();
  await receiver.stop();
  await removeDir(queueDir);
}

const direct = median(rates.get("direct")!.accepted);
const bytes = new TextEncoder().encode(benchMessage("R0-0")).byteLength;
console.log(
  `\n${MESSAGES} ADT^A01 messages of ~${bytes} bytes over ${CONNECTIONS} connections, ` +
    `${ROUNDS} rounds, medians:\n`,
);
console.log(markdownTable(
  ["path", "answered/s", "delivered/s", "answered: ratio to direct"],
  PATHS.map((p) => {
    const r = rates.get(p)!;
    const answered = median(r.accepted);
    return [p, fixed(answered, 0), fixed(median(r.delivered), 0), fixed(answered / direct, 2)];
  }),
));
