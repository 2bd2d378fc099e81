import assert from "node:assert/strict";
import type { MetricsSummary } from "../../observability/mod.ts";
import type { RequestEvent } from "../../pipeline/mod.ts";
import { messageSearch, timeOf } from "./messages.tsx";
import { prettyJson, prettyXml } from "./pretty.ts";
import { RateSampler, shortRate } from "./rates.ts";
import { matches, tailFilter } from "./tail.tsx";
import { safeNext } from "./login.tsx";

const summary = (requests: number, errors: number, ms: number): MetricsSummary => ({
  pipelines: { p: { requests, errors, in_flight: 0, duration_ms_sum: ms } },
  error_counts: {},
});

Deno.test("rates: since the start first, then over the window of earlier samples", () => {
  const sampler = new RateSampler(60_000, 1_000);
  const first = sampler.rates(summary(100, 10, 500), 10_000, 0).get("p")!;
  assert.equal(first.sinceStart, true);
  assert.equal(first.rps, 10);
  assert.equal(first.meanLatencyMs, 5);
  const second = sampler.rates(summary(300, 10, 2500), 20_000, 0).get("p")!;
  assert.equal(second.sinceStart, false);
  assert.equal(second.rps, 20);
  assert.equal(second.errorsPerSec, 0);
  assert.equal(second.meanLatencyMs, 10);
  // Samples older than the window are forgotten; with none left, the rates are since the start.
  sampler.rates(summary(350, 10, 2500), 50_000, 0);
  const third = sampler.rates(summary(400, 10, 2500), 90_000, 0).get("p")!;
  assert.deepEqual([third.windowSecs, third.rps], [40, 1.25]);
  const alone = new RateSampler(60_000, 1_000);
  alone.rates(summary(1, 0, 1), 1_000, 0);
  assert.equal(alone.rates(summary(2, 0, 1), 100_000, 0).get("p")!.sinceStart, true);
  assert.deepEqual([shortRate(0), shortRate(0.25), shortRate(1.25), shortRate(1500)], [
    "0",
    "0.25",
    "1.3",
    "1.5k",
  ]);
});

Deno.test("tail filter: pipeline and status classes; unknown values mean all", () => {
  const event = (pipeline: string, status: number): RequestEvent => ({
    at: "2026-01-01T00:00:00.000Z",
    request_id: "r",
    pipeline,
    status,
    duration_ms: 1,
    fields: {},
    worker: 0,
  });
  const f = (q: Record<string, string>) => tailFilter((n) => q[n]);
  assert.ok(matches(event("a", 503), f({ status: "5xx" })));
  assert.ok(!matches(event("a", 404), f({ status: "5xx" })));
  assert.ok(matches(event("a", 404), f({ status: "errors" })));
  assert.ok(matches(event("a", 201), f({ status: "201" })));
  assert.ok(!matches(event("b", 201), f({ pipeline: "a" })));
  assert.deepEqual(f({ status: "<script>" }), { pipeline: "", status: "" });
});

Deno.test("message search: bounded fields, checked status; datetime-local read as UTC", () => {
  const s = messageSearch((n) =>
    ({
      field1: "patient_id",
      value1: "P123",
      field2: "bad key!",
      value2: "x",
      status: "drop table",
      pipeline: "adt",
    })[n]
  );
  assert.deepEqual(s.fields, [["patient_id", "P123"]]);
  assert.equal(s.status, "");
  assert.equal(s.pipeline, "adt");
  assert.equal(timeOf("2026-11-27T06:30"), "2026-11-27T06:30:00.000Z");
  assert.equal(timeOf("nonsense"), undefined);
});

Deno.test("pretty bodies: JSON and XML indented, anything else as it is", () => {
  assert.equal(prettyJson('{"a":[1,2]}'), '{\n  "a": [\n    1,\n    2\n  ]\n}');
  assert.equal(prettyJson("not json"), "not json");
  assert.equal(
    prettyXml('<Patient xmlns="http://hl7.org/fhir"><id value="1"/></Patient>'),
    '<Patient xmlns="http://hl7.org/fhir">\n  <id value="1"></id>\n</Patient>',
  );
  assert.equal(prettyXml("<unclosed"), "<unclosed");
});

Deno.test("after sign-in: only a path of the console", () => {
  const base = "/admin/console";
  assert.equal(safeNext("/admin/console/health", base), "/admin/console/health");
  for (
    const bad of ["https://evil.example", "//evil.example", "/admin/other", "/admin/console\\x"]
  ) {
    assert.equal(safeNext(bad, base), base, bad);
  }
});

Deno.test("bodies on the message page: DICOM as a tag table, binary as size and hex", async () => {
  const { BodyView } = await import("./messages.tsx");
  const html = (view: Parameters<typeof BodyView>[0]["view"]) =>
    String(BodyView({ view, size: 2048, truncated: true }));
  const dicom = html({
    kind: "dicom",
    tags: [{ tag: "(0010,0010)", keyword: "PatientName", vr: "PN", value: "Doe^Jane" }],
  });
  assert.match(dicom, /<table data-testid="dicom-tags">/);
  assert.match(
    dicom,
    /<code>\(0010,0010\)<\/code><\/td><td>PatientName<\/td><td>PN<\/td><td>Doe\^Jane/,
  );
  assert.match(dicom, /DICOM, 2048 bytes \(only the first part was kept\)/);
  const binary = html({ kind: "binary", hex: "00 01 02" });
  assert.match(binary, /Binary, 2048 bytes/);
  assert.match(binary, /<pre data-kind="hex">00 01 02<\/pre>/);
  // Text is escaped, never markup.
  assert.match(html({ kind: "text", text: "<script>x</script>" }), /&lt;script&gt;/);
});
