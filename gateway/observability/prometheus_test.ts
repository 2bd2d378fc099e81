import assert from "node:assert/strict";
import { escapeHelp, escapeLabelValue, formatValue, Registry } from "./prometheus.ts";
import { parseExposition, sampleValue } from "../../tests/support/metrics.ts";

Deno.test("label values are escaped and read back unchanged", () => {
  assert.equal(escapeLabelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd');
  const reg = new Registry();
  const c = reg.counter("x_total", "Things.", ["name"]);
  const nasty = 'quote " backslash \\ newline \n end, comma} brace';
  c.labels(nasty).inc(3);
  const text = reg.render();
  assert.ok(!text.includes("newline \n"), "a raw line feed must not reach the output");
  const exp = parseExposition(text);
  assert.equal(sampleValue(exp, "x_total", { name: nasty }), 3);
});

Deno.test("HELP text escapes backslash and line feed", () => {
  assert.equal(escapeHelp("a\\b\nc"), "a\\\\b\\nc");
  const reg = new Registry();
  reg.gauge("g", "two\nlines \\ here");
  const exp = parseExposition(reg.render());
  assert.equal(exp.help.get("g"), "two\nlines \\ here");
  assert.equal(exp.types.get("g"), "gauge");
});

Deno.test("special values render as Prometheus reads them", () => {
  assert.equal(formatValue(NaN), "NaN");
  assert.equal(formatValue(Infinity), "+Inf");
  assert.equal(formatValue(-Infinity), "-Inf");
  assert.equal(formatValue(0.25), "0.25");
});

Deno.test("the same label values reach the same cell; counters never go down", () => {
  const reg = new Registry();
  const c = reg.counter("req_total", "Requests.", ["pipeline", "status"]);
  assert.equal(c.labels("a", 200), c.labels("a", 200));
  assert.notEqual(c.labels("a", 200), c.labels("a", 500));
  c.labels("a", 200).inc();
  c.labels("a", 200).inc(2);
  c.labels("a", 200).inc(-5);
  c.labels("b", 200).inc();
  const exp = parseExposition(reg.render());
  assert.equal(sampleValue(exp, "req_total", { pipeline: "a", status: "200" }), 3);
  assert.equal(sampleValue(exp, "req_total", { pipeline: "b", status: "200" }), 1);
  assert.equal(sampleValue(exp, "req_total", { pipeline: "a", status: "500" }), 0);
});

Deno.test("histogram buckets are cumulative and end with +Inf, _sum and _count", () => {
  const reg = new Registry();
  const h = reg.histogram("lat_seconds", "Latency.", ["p"], [0.1, 1, 10]);
  for (const v of [0.05, 0.1, 0.5, 2, 20]) h.labels("x").observe(v);
  const exp = parseExposition(reg.render());
  assert.equal(exp.types.get("lat_seconds"), "histogram");
  const bucket = (le: string) => sampleValue(exp, "lat_seconds_bucket", { p: "x", le });
  assert.equal(bucket("0.1"), 2, "le is inclusive: 0.05 and 0.1");
  assert.equal(bucket("1"), 3);
  assert.equal(bucket("10"), 4);
  assert.equal(bucket("+Inf"), 5);
  assert.equal(sampleValue(exp, "lat_seconds_count", { p: "x" }), 5);
  assert.equal(sampleValue(exp, "lat_seconds_sum", { p: "x" }), 0.05 + 0.1 + 0.5 + 2 + 20);
  const order = exp.samples.filter((s) => s.name === "lat_seconds_bucket").map((s) => s.labels.le);
  assert.deepEqual(order, ["0.1", "1", "10", "+Inf"]);
});

Deno.test("unlabeled families render without braces; empty families keep HELP and TYPE", () => {
  const reg = new Registry();
  reg.gauge("up", "Up.").labels().set(1);
  reg.counter("never_total", "Never seen.", ["code"]);
  const text = reg.render();
  assert.match(text, /^up 1$/m);
  const exp = parseExposition(text);
  assert.equal(exp.types.get("never_total"), "counter");
  assert.equal(exp.samples.filter((s) => s.name === "never_total").length, 0);
});

Deno.test("collectors run at render time", () => {
  const reg = new Registry();
  const g = reg.gauge("now_value", "A value read at scrape.").labels();
  let n = 0;
  reg.onCollect(() => g.set(++n));
  assert.equal(sampleValue(parseExposition(reg.render()), "now_value"), 1);
  assert.equal(sampleValue(parseExposition(reg.render()), "now_value"), 2);
});

Deno.test("invalid definitions and label counts are rejected", () => {
  const reg = new Registry();
  assert.throws(() => reg.counter("bad-name", "x"));
  assert.throws(() => reg.counter("ok_total", "x", ["bad-label"]));
  assert.throws(() => reg.counter("ok2_total", "x", ["__reserved"]));
  assert.throws(() => reg.histogram("h", "x", ["le"], [1]));
  assert.throws(() => reg.histogram("h2", "x", [], [1, 1]));
  const c = reg.counter("dup_total", "x", ["a"]);
  assert.throws(() => reg.counter("dup_total", "x"));
  assert.throws(() => c.labels());
  assert.throws(() => c.labels("a", "b"));
});

Deno.test("labels1/2/3 reach the same cells as labels(), creating them when new", () => {
  const r = new Registry();
  const one = r.counter("one_total", "one label", ["a"]);
  const two = r.counter("two_total", "two labels", ["a", "b"]);
  const three = r.histogram("three_seconds", "three labels", ["a", "b", "c"], [0.1, 1]);
  assert.equal(one.labels1("x"), one.labels("x"));
  assert.equal(two.labels2("x", 200), two.labels("x", 200));
  assert.notEqual(two.labels2("x", 200), two.labels2("x", 500));
  assert.equal(three.labels3("p", "b", "ok"), three.labels("p", "b", "ok"));
  two.labels2("x", 200).inc();
  assert.match(r.render(), /two_total\{a="x",b="200"\} 1/);
  assert.throws(() => one.labels2("x", "y"), /takes 1 label value/);
});
