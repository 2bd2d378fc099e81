/**
 * The queues' registry: an attempt made when a queue opens (a restart with messages waiting),
 * before the configuration that serves it is attached, waits for it instead of failing (and costing
 * the message a back-off).
 */
import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { Logger } from "../../shared/mod.ts";
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import { Body, RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type { Backend } from "../pipeline/mod.ts";
import { DeliveryQueues } from "./registry.ts";

const CONFIG = {
  name: "api",
  service: "http",
  timeout_secs: 30,
  queue: {
    store: "file",
    ordering: "fifo",
    concurrency: 1,
    max_messages: 100,
    max_bytes: 1 << 20,
    max_attempts: 0,
    max_age_secs: 86_400,
    // An hour: a first attempt that failed for want of a configuration would wait this long.
    initial_backoff_ms: 3_600_000,
    max_backoff_ms: 3_600_000,
    fsync: false,
    fhir_conditional_create: false,
  },
} as unknown as BackendConfig;

function request(): RequestEnvelope {
  return new RequestEnvelope({
    id: "r1",
    protocol: "http",
    method: "POST",
    path: "/x",
    endpoint: "api",
    remoteAddr: "10.0.0.1",
    headers: new Headers({ "content-type": "application/json" }),
    body: Body.fromData({ waiting: true }),
  });
}

/** Lets every queued callback run (a settled promise's handlers included). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 0));
}

Deno.test("delivery queues: an attempt made before the configuration is attached waits for it, then goes", async () => {
  const queues = new DeliveryQueues(new Logger({ level: "error", format: "json", sink: () => {} }));
  const received: string[] = [];
  const backend = {
    name: "api",
    config: CONFIG,
    invoke: async (req: RequestEnvelope) => {
      received.push(await req.body.text());
      return new ResponseEnvelope(200, new Headers(), Body.empty());
    },
    close: () => {},
  } as unknown as Backend;
  let outcome = "pending";
  const answer = queues.deliver("api", request(), new AbortController().signal);
  answer.then(() => outcome = "answered", (err: Error) => outcome = `failed: ${err.message}`);
  await settle();
  // Not refused as `backend_not_configured` (which would cost the message a back-off).
  assertEquals(outcome, "pending");
  assertEquals(received, []);
  await queues.attach(
    { backend: (n) => n === "api" ? backend : undefined, acquire() {}, release() {} },
    new Set(),
  );
  assertEquals((await answer).status, 200);
  assertEquals(received, [`{"waiting":true}`]);
  // Once a configuration is attached, a backend it does not have is refused at once.
  await assertRejects(
    () => queues.deliver("other", request(), new AbortController().signal),
    /backend other is not configured/,
  );
});

Deno.test("delivery queues: an attempt waiting for the first configuration ends with its signal", async () => {
  const queues = new DeliveryQueues(new Logger({ level: "error", format: "json", sink: () => {} }));
  const abort = new AbortController();
  const answer = queues.deliver("api", request(), abort.signal);
  abort.abort(new Error("attempt timed out"));
  await assertRejects(() => answer, /attempt timed out/);
});
