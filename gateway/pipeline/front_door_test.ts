/** The front door: request ids, failures counted and (ours) logged, one access log line. */
import { assert, assertEquals } from "../../tests/assert.ts";
import { Logger } from "../../shared/mod.ts";
import { GatewayError } from "../errors.ts";
import { createMetrics } from "../observability/mod.ts";
import { requestIdOf, RequestRecord } from "./mod.ts";

function setup() {
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({
    level: "info",
    format: "json",
    sink: (l) => lines.push(JSON.parse(l)),
  });
  return { metrics: createMetrics(), logger, lines };
}

Deno.test("requestIdOf: a sane X-Request-Id is kept, anything else replaced by a UUID", () => {
  assertEquals(requestIdOf("abc-123:x.y_z"), "abc-123:x.y_z");
  for (const bad of [null, "", "a b", "x".repeat(129), "id\r\nset-cookie: a"]) {
    const id = requestIdOf(bad);
    assert(/^[0-9a-f-]{36}$/.test(id), `${bad} -> ${id}`);
  }
});

Deno.test("RequestRecord: 4xx counted, 5xx counted and logged, one access line with the code", () => {
  const { metrics, logger, lines } = setup();
  const record = new RequestRecord({ metrics, logger }, "p", "rid");
  assertEquals(metrics.summary().pipelines.p.in_flight, 1);
  record.failed(new GatewayError(404, "not_found", "nothing"));
  assertEquals(lines.length, 0);
  record.failed(new GatewayError(502, "backend_unavailable", "down", undefined, "ECONNREFUSED"));
  assertEquals(lines[0].msg, "request failed");
  assertEquals([lines[0].request_id, lines[0].pipeline, lines[0].error], [
    "rid",
    "p",
    "ECONNREFUSED",
  ]);
  record.finished(502, "request", { status: 502, error_code: record.errorCode });
  record.finished(200, "request", { status: 200 }); // a second end is ignored
  assertEquals(lines.length, 2);
  assertEquals([lines[1].msg, lines[1].status, lines[1].error_code], [
    "request",
    502,
    "backend_unavailable",
  ]);
  assert(typeof lines[1].duration_ms === "number");
  const summary = metrics.summary();
  const { duration_ms_sum, ...counts } = summary.pipelines.p;
  assertEquals(counts, { requests: 1, errors: 1, in_flight: 0 });
  assert(duration_ms_sum >= 0, "the time spent is summed");
  assertEquals(summary.error_counts, { not_found: 1, backend_unavailable: 1 });
});

Deno.test("RequestRecord: with a durable audit trail the end waits for the record; one not kept ends as 503", async () => {
  const { metrics, logger, lines } = setup();
  const commits: PromiseWithResolvers<void>[] = [];
  const audit = {
    enabled: true,
    requestFinished: () => {
      const c = Promise.withResolvers<void>();
      commits.push(c);
      return c.promise;
    },
  };
  const kept = new RequestRecord({ metrics, logger, audit }, "p", "kept");
  const waiting = kept.finished(200, "request", { status: 200 });
  assert(waiting, "the caller is given the commit to wait for");
  assertEquals([lines.length, metrics.summary().pipelines.p.requests], [0, 0]);
  commits[0].resolve();
  await waiting;
  assertEquals([lines[0].request_id, lines[0].status], ["kept", 200]);

  const lost = new RequestRecord({ metrics, logger, audit }, "p", "lost");
  const refused = lost.finished(200, "request", { status: 200 });
  commits[1].reject(new GatewayError(503, "audit_unavailable", "not kept", undefined, "ENOSPC"));
  const err = await refused!.then(() => undefined, (e) => e as GatewayError);
  assertEquals([err?.status, err?.code], [503, "audit_unavailable"]);
  // Logged as the failure it is, and the access line and metrics say what the client got.
  assertEquals([lines[1].msg, lines[1].error], [
    "answer withheld: its audit record was not kept",
    "ENOSPC",
  ]);
  assertEquals([lines[2].request_id, lines[2].status, lines[2].error_code], [
    "lost",
    503,
    "audit_unavailable",
  ]);
  assertEquals(metrics.summary().error_counts, { audit_unavailable: 1 });
});
