/**
 * JOLT engine benchmark: `deno run -A bench/jolt/main.ts`.
 *
 * For every fixture in fixtures/transforms/ (spec + samples/<name>.input.json) it measures a
 * spec compiled once and applied many times against parse + compile + apply on every call,
 * then a synthetic 20-rule shift over a ~2 KiB document (target: under 20 µs per transform).
 *
 * Rows marked "bytes in, bytes out" measure what the gateway does with a body: from the JSON
 * bytes to the output bytes, either on the raw JSON path a lone shift takes (applyJson: no parse,
 * no stringify) or through JSON.parse, apply, JSON.stringify and UTF-8 encoding.
 *
 * The "scan" rows time the raw JSON path's first step alone, bytes to tape, on the synthetic
 * document and on a ~120 KB FHIR bundle.
 */

import { compile, type CompiledSpec, LINEAR_ENGINE, parseSpec } from "../../shared/jolt/mod.ts";

// The fixtures' split separators (`[^A-Za-z0-9.]+`) need V8's linear regular expression engine,
// which the gateway's commands turn on (docs/transforms.md): run again with it when it is off.
const V8_FLAGS =
  "--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks";
if (!LINEAR_ENGINE) {
  const again = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--node-modules-dir=manual",
      `--v8-flags=${V8_FLAGS}`,
      import.meta.filename!,
      ...Deno.args,
    ],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  Deno.exit(again.code);
}
import { scanJson, ScanScratch } from "../../shared/jolt/fast/raw_json.ts";

const FIXTURES = new URL("../../fixtures/transforms/", import.meta.url);
const BATCH_MS = 25;
const BATCHES = 15;
const SYNTHETIC_TARGET_US = 20;

/** One measured case. */
interface Row {
  name: string;
  mode: string;
  usPerOp: number;
  opsPerSec: number;
}

/**
 * Microseconds per call of `fn`: after a warm-up, runs batches of about BATCH_MS and reports
 * the median batch (robust against other load on the machine).
 */
function measure(fn: () => unknown): number {
  let sink: unknown;
  let n = 1;
  // Calibrate the batch size; this doubles as the warm-up.
  for (;;) {
    const t = performance.now();
    for (let i = 0; i < n; i++) sink = fn();
    if (performance.now() - t >= BATCH_MS) break;
    n *= 2;
  }
  const perCall: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) sink = fn();
    perCall.push(((performance.now() - t) * 1000) / n);
  }
  if (sink === Symbol.for("never")) console.log(sink);
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(BATCHES / 2)];
}

function row(name: string, mode: string, usPerOp: number): Row {
  return { name, mode, usPerOp, opsPerSec: 1e6 / usPerOp };
}

async function fixtureRows(): Promise<Row[]> {
  const rows: Row[] = [];
  const names: string[] = [];
  for await (const e of Deno.readDir(FIXTURES)) {
    if (e.isFile && e.name.endsWith(".json")) names.push(e.name.slice(0, -".json".length));
  }
  names.sort();
  for (const name of names) {
    const specText = await Deno.readTextFile(new URL(`${name}.json`, FIXTURES));
    let input: unknown;
    try {
      input = JSON.parse(await Deno.readTextFile(new URL(`samples/${name}.input.json`, FIXTURES)));
    } catch {
      continue; // a spec without a sample input is not benchmarked
    }
    const compiled = parseSpec(specText);
    rows.push(row(name, "compiled once", measure(() => compiled.apply(input))));
    rows.push(row(name, "parse+compile per call", measure(() => parseSpec(specText).apply(input))));
    rows.push(...bytesRows(name, compiled, input));
  }
  return rows;
}

/** A ~2 KiB order-like document and a 20-rule shift over it. */
export function synthetic(): { input: unknown; spec: unknown[] } {
  const items = Array.from({ length: 14 }, (_, i) => ({
    sku: `SKU-${1000 + i}`,
    name: `Item number ${i} (standard edition)`,
    qty: i + 1,
    price: 9.99 + i,
    tags: ["catalog", "spring"],
  }));
  const input = {
    id: "ORD-2024-0001",
    status: "open",
    created: "2024-03-01T10:00:00Z",
    customer: {
      id: "C-42",
      name: { first: "Jane", last: "Doe" },
      email: "jane.doe@example.org",
      phone: "+1-555-0100",
      address: { line1: "1 Main St", city: "Springfield", zip: "12345", country: "US" },
    },
    items,
    payment: { method: "card", last4: "4242", amount: 123.45, currency: "USD" },
    shipping: { method: "ground", carrier: "UPS", tracking: "1Z999AA10123456784" },
    "attr-color": "red",
    "attr-size": "L",
    "attr-fit": "regular",
    notes: ["leave at door", "fragile"],
  };
  const spec = {
    id: "orderId",
    status: "state",
    created: "createdAt",
    customer: {
      id: "customer.id",
      name: { first: "customer.firstName", last: "customer.lastName" },
      email: "customer.contact.email",
      phone: "customer.contact.phone",
      address: { "*": "customer.address.&" },
    },
    items: {
      "*": {
        sku: "lines[&1].sku",
        qty: "lines[&1].quantity",
        price: "lines[&1].unitPrice",
        "@name": "lineNames.&1",
      },
    },
    payment: { method: "payment.method", amount: "payment.total", currency: "payment.currency" },
    shipping: { method: "shipment.method", "carrier|tracking": "shipment.&" },
    "attr-*": "attributes.&(0,1)",
    notes: "notes",
  };
  return { input, spec: [{ operation: "shift", spec }] };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The "bytes in, bytes out" rows of one spec and input (see the module doc). */
function bytesRows(name: string, compiled: CompiledSpec, input: unknown): Row[] {
  const bytes = encoder.encode(JSON.stringify(input));
  const rows = [
    row(
      name,
      "bytes in, bytes out: parsed",
      measure(() =>
        encoder.encode(JSON.stringify(compiled.apply(JSON.parse(decoder.decode(bytes)))))
      ),
    ),
  ];
  if (compiled.applyJson(bytes) !== null) {
    rows.push(row(name, "bytes in, bytes out: raw JSON", measure(() => compiled.applyJson(bytes))));
  }
  return rows;
}

/** A FHIR collection bundle of `count` Observations (about 1 KB each). */
export function fhirBundle(count: number): unknown {
  const entry = Array.from({ length: count }, (_, i) => ({
    fullUrl: `urn:uuid:obs-${i}`,
    resource: {
      resourceType: "Observation",
      id: `obs-${i}`,
      status: "final",
      code: { coding: [{ system: "http://loinc.org", code: "8867-4", display: "Heart rate" }] },
      subject: { reference: `Patient/${i % 17}` },
      valueQuantity: {
        value: 60 + (i % 40) + 0.1 * (i % 3),
        unit: "beats/minute",
        system: "http://unitsofmeasure.org",
        code: "/min",
      },
      effectiveDateTime: "2024-03-01T10:00:00Z",
      note: [{ text: "Résumé: patient at rest, measured twice; average reported." }],
    },
  }));
  return { resourceType: "Bundle", type: "collection", entry };
}

/** Scan rows (see the module doc), and MB/s lines for them. */
function scanRows(documents: [string, unknown][]): { rows: Row[]; rates: string[] } {
  const rows: Row[] = [];
  const rates: string[] = [];
  const scratch = new ScanScratch();
  for (const [name, value] of documents) {
    const bytes = encoder.encode(JSON.stringify(value));
    const label = `scan, ${name} (${bytes.length} B)`;
    for (
      const [mode, scan] of [["scanner", scanJson]] as const
    ) {
      const r = row(label, mode, measure(() => scan(bytes, scratch)));
      rows.push(r);
      rates.push(`${label}, ${mode}: ${(bytes.length / r.usPerOp).toFixed(0)} MB/s`);
    }
  }
  return { rows, rates };
}

function printTable(rows: Row[]): void {
  const header = ["case", "mode", "µs/transform", "transforms/s"];
  const body = rows.map((r) => [
    r.name,
    r.mode,
    r.usPerOp.toFixed(2),
    Math.round(r.opsPerSec).toLocaleString("en-US"),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const b of body) console.log(line(b));
}

if (import.meta.main) {
  const rows = await fixtureRows();
  const { input, spec } = synthetic();
  const compiled = compile(spec);
  const size = JSON.stringify(input).length;
  const synth = row(
    `synthetic 20-rule shift (${size} B)`,
    "compiled once",
    measure(() => compiled.apply(input)),
  );
  rows.push(synth);
  const specText = JSON.stringify(spec);
  rows.push(
    row(synth.name, "parse+compile per call", measure(() => parseSpec(specText).apply(input))),
  );
  rows.push(...bytesRows(synth.name, compiled, input));
  const scans = scanRows([["synthetic", input], ["FHIR bundle", fhirBundle(260)]]);
  rows.push(...scans.rows);
  printTable(rows);
  console.log(`\n${scans.rates.join("\n")}`);
  const verdict = synth.usPerOp < SYNTHETIC_TARGET_US ? "meets" : "MISSES";
  console.log(
    `\nsynthetic shift: ${
      synth.usPerOp.toFixed(2)
    } µs ${verdict} the ${SYNTHETIC_TARGET_US} µs target`,
  );
}
