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
