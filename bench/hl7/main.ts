/**
 * HL7 v2 throughput (`deno run -A bench/hl7/main.ts [--messages 5000] [--connections 8]
 * [--rounds 3]`), in one run against one receiver, `@medplum/hl7`'s Hl7Server (the npm server):
 * - direct: the sender's MLLP connections straight to the Hl7Server (the npm server's own receive
 *   rate, the reference);
 * - gateway, MLLP: the same sender to a gateway process's `hl7` endpoint, whose pipeline's `hl7`
 *   backend sends each message on to the Hl7Server (pool_size = connections) and answers with its
 *   ACK;
 * - gateway, HTTP bridge: the same messages POSTed as `x-application/hl7-v2+er7` to an `http`
 *   endpoint of that gateway, same backend.
 * Each sender sends one message at a time and waits for its ACK (AA checked, with the message's
 * control id). Rounds alternate the order; the table gives the median round's messages/s and the
 * ratio to direct.
 */
import { parseArgs } from "node:util";
import { freePort, startGateway } from "../../tests/support/mod.ts";
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
`,
});

type Path = "direct" | "gateway, MLLP" | "gateway, HTTP bridge";
const PATHS: Path[] = ["direct", "gateway, MLLP", "gateway, HTTP bridge"];

async function run(path: Path, count: number, prefix: string): Promise<number> {
  receiver.messages.length = 0;
  receiver.controlIds.length = 0;
  const ms = path === "direct"
    ? await sendMllp(receiver.port, count, CONNECTIONS, prefix)
    : path === "gateway, MLLP"
    ? await sendMllp(mllpPort, count, CONNECTIONS, prefix)
    : await sendHttp(`http://127.0.0.1:${httpPort}/hl7/adt`, count, CONNECTIONS, prefix);
  if (receiver.messages.length !== count) {
    throw new Error(`${path}: the receiver got ${receiver.messages.length} of ${count}`);
  }
  return count / (ms / 1000);
}

const rates = new Map<Path, number[]>(PATHS.map((p) => [p, []]));
try {
  // Warm-up: connections opened, code compiled.
  for (const path of PATHS) await run(path, 200, `W${path.length}-`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? PATHS : [...PATHS].reverse();
    for (const path of order) {
      const rate = await run(path, MESSAGES, `R${round}${path.length}-`);
      rates.get(path)!.push(rate);
      console.error(`round ${round + 1}: ${path}: ${fixed(rate, 0)} messages/s`);
    }
  }
} finally {
  await gateway.stop();
  await receiver.stop();
}

const direct = median(rates.get("direct")!);
const bytes = new TextEncoder().encode(benchMessage("R0-0")).byteLength;
console.log(
  `\n${MESSAGES} ADT^A01 messages of ~${bytes} bytes over ${CONNECTIONS} connections, ` +
    `${ROUNDS} rounds, medians:\n`,
);
console.log(markdownTable(
  ["path", "messages/s", "ratio to direct"],
  PATHS.map((p) => {
    const rate = median(rates.get(p)!);
    return [p, fixed(rate, 0), fixed(rate / direct, 2)];
  }),
));
