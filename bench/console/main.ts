/**
 * What the operations console's live tail costs the request path (`deno run -A
 * bench/console/main.ts [--requests 200000] [--rounds 7]`): the front door's end of a request
 * (`RequestRecord`: metrics, the feed hook, no log line) with nobody watching the tail, and with
 * one tail watching (a listener that filters and serialises each event, as a server-sent event
 * stream does). Medians of the rounds, nanoseconds per request, and their ratio; the rounds
 * alternate so that both see the same machine (a shared one: compare ratios, not absolutes).
 */
import { parseArgs } from "node:util";
import { Logger } from "../../shared/mod.ts";
import { createMetrics } from "../../gateway/observability/mod.ts";
import { RequestFeed, requestFeed, RequestRecord } from "../../gateway/pipeline/mod.ts";
import { matches } from "../../gateway/management/console/mod.ts";
import { fixed, markdownTable } from "../http_proxy/report.ts";

const flags = parseArgs({
  options: {
    requests: { type: "string", default: "200000" },
    rounds: { type: "string", default: "7" },
  },
}).values;
const REQUESTS = Number(flags.requests);
const ROUNDS = Number(flags.rounds);

const deps = {
  metrics: createMetrics(),
  // Above info: the access log line is not written, so the hook's cost is not hidden by it.
  logger: new Logger({ level: "warn", format: "json", sink: () => {} }),
};
const fields = { method: "POST", path: "/orders/{…}", pipeline: "orders", status: 202 };

/** Nanoseconds per request of `n` requests through the front door's record. */
function run(n: number): number {
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const record = new RequestRecord(deps, "orders", "req-1");
    record.finished(202, "request", fields);
  }
  return (performance.now() - start) * 1e6 / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const idle: number[] = [];
const watched: number[] = [];
let delivered = 0;
run(REQUESTS / 4); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  idle.push(run(REQUESTS));
  const unsubscribe = requestFeed.subscribe((event) => {
    if (matches(event, { pipeline: "orders", status: "" })) {
      delivered += JSON.stringify(event).length > 0 ? 1 : 0;
    }
  });
  watched.push(run(REQUESTS));
  unsubscribe();
}
if (requestFeed.watched || !(requestFeed instanceof RequestFeed)) throw new Error("feed left on");
if (delivered !== ROUNDS * REQUESTS) throw new Error(`the tail saw ${delivered} events`);

const a = median(idle);
const b = median(watched);
console.log(
  `Front door per request, ${REQUESTS} requests x ${ROUNDS} rounds (medians; shared machine)\n`,
);
console.log(markdownTable(["tail", "ns/request", "ratio to nobody watching"], [
  ["nobody watching", fixed(a, 0), "1.00"],
  ["one tail watching", fixed(b, 0), fixed(b / a)],
]));
