/**
 * The codec over messages nobody here wrote (tests/support/hl7_samples.ts: the fixtures shipped in
 * the npm packages hl7-standard 1.0.4 and hl7 1.1.1, versions 2.3 to 2.5.1) and over generated
 * ones: ER7 -> JSON -> ER7 is byte-identical, and JSON -> ER7 -> JSON gives the same JSON.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { formatHl7, type Hl7Json, isHl7Batch, parseHl7, readHl7Header } from "./mod.ts";
import {
  HL7_REFUSED_SAMPLES,
  hl7Samples,
  sampleFile,
  withCr,
} from "../../../tests/support/hl7_samples.ts";
import { throws } from "node:assert/strict";
import { Hl7Error } from "./mod.ts";

Deno.test("corpus: every sample message comes back byte for byte (CR-terminated, as HL7 sends them)", async () => {
  const samples = await hl7Samples();
  equal(samples.length, 10);
  const versions = new Set<string>();
  const types = new Set<string>();
  for (const { name, text } of samples) {
    const er7 = withCr(text);
    const json = parseHl7(er7);
    equal(formatHl7(json), er7, name);
    equal(formatHl7(JSON.parse(JSON.stringify(json))), er7, name);
    const messages = isHl7Batch(json) ? json.batches.flatMap((b) => b.messages) : [json];
    ok(messages.length > 0, name);
    for (const m of messages) {
      const header = readHl7Header(formatHl7({ ...m, terminator: "\r" }));
      versions.add(header.version);
      types.add(`${header.messageType}^${header.triggerEvent}`);
    }
  }
  deepEqual([...versions].sort(), ["2.3", "2.3.1", "2.4", "2.5", "2.5.1"]);
  for (const t of ["ADT^A01", "ADT^A04", "ORU^R01", "RSP^K11", "ACK^V01"]) ok(types.has(t), t);
});

Deno.test("corpus: fixtures/hl7 (ours, v2.5.1 to 2.8) come back byte for byte", async () => {
  const dir = new URL("../../../fixtures/hl7/", import.meta.url);
  const versions: string[] = [];
  for (const name of ["adt_a01", "adt_a04", "adt_a08", "oru_r01"]) {
    const er7 = withCr(await Deno.readTextFile(new URL(`${name}.hl7`, dir)));
    equal(formatHl7(parseHl7(er7)), er7, name);
    versions.push(readHl7Header(er7).version);
  }
  deepEqual(versions.sort(), ["2.5.1", "2.6", "2.7", "2.8"]);
});

Deno.test("corpus: as shipped (LF, CRLF, mixed), the text comes back with its first terminator", async () => {
  for (const { name, text } of await hl7Samples()) {
    const json = parseHl7(text);
    const t = json.terminator!;
    // Blank lines are dropped; the last segment keeps its terminator if it had one.
    const lines = text.split(/\r\n|\r|\n/).filter((l) => l !== "");
    const expected = lines.join(t) + (/[\r\n]$/.test(text) ? t : "");
    equal(formatHl7(json), expected, name);
  }
});

Deno.test("corpus: the batch file keeps its FHS, BHS, two messages, BTS and FTS", async () => {
  const batch = (await hl7Samples()).find((s) => s.name.endsWith("batch.hl7"))!;
  const json = parseHl7(batch.text);
  if (!isHl7Batch(json)) throw new Error("not a batch");
  ok(json.FHS && json.FTS && json.batches[0].BHS && json.batches[0].BTS);
  deepEqual(json.batches[0].messages.map((m) => m.segments.MSH[0]["9"]), [
    [{ "1": "ADT", "2": "A01" }],
    [{ "1": "RSP", "2": "K11", "3": "RSP_K11" }],
  ]);
});

Deno.test("corpus: shipped samples that are not valid ER7 are refused with the reason", async () => {
  for (const { pkg, version, file, code } of HL7_REFUSED_SAMPLES) {
    const text = await sampleFile(pkg, version, file);
    throws(() => parseHl7(text), (e: unknown) => e instanceof Hl7Error && e.code === code, file);
  }
});

/** A small seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PUNCTUATION = "|^~\\&#$*/!%@+=:;?";

/** A random valid ER7 message: random delimiters, escapes, nulls, empties, trailing separators. */
function generate(rnd: () => number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)];
  const chars = [...PUNCTUATION].sort(() => rnd() - 0.5);
  const [f, c, r, e, s] = chars;
  const encoding = rnd() < 0.2 ? `${c}${r}${e}${s}${chars[5]}` : `${c}${r}${e}${s}`;
  const word = () => pick(["A", "Doe", "12345", "2.5.1", "x y", "ÄÖü", "日本", "-", "."]);
  const escape = () => pick(["F", "S", "T", "R", "E", "X0D0A", ".br", "H", "N", "C2842", "Zabc"]);
  const leaf = (): string => {
    const roll = rnd();
    if (roll < 0.15) return "";
    if (roll < 0.2) return '""';
    if (roll < 0.35) return `${word()}${e}${escape()}${e}${word()}`;
    return word();
  };
  const list = (n: number, sep: string, item: () => string) =>
    Array.from({ length: n }, item).join(sep);
  const component = () => rnd() < 0.15 ? list(1 + Math.floor(rnd() * 3), s, leaf) : leaf();
  const repetition = () => list(1 + Math.floor(rnd() * 4), c, component);
  const field = () => rnd() < 0.1 ? list(2 + Math.floor(rnd() * 2), r, repetition) : repetition();
  const segment = () =>
    `${pick(["PID", "PV1", "OBX", "ZX1", "NK1", "Z99"])}${f}${
      list(Math.floor(rnd() * 12), f, field)
    }`;
  const msh = `MSH${f}${encoding}${f}${list(10, f, field)}`;
  const body = Array.from({ length: 1 + Math.floor(rnd() * 6) }, segment);
  return [msh, ...body].join("\r") + (rnd() < 0.8 ? "\r" : "");
}

Deno.test("property: 2,000 generated messages come back byte for byte, and their JSON is stable", () => {
  const rnd = random(37);
  for (let i = 0; i < 2000; i++) {
    const text = generate(rnd);
    let json: Hl7Json;
    try {
      json = parseHl7(text);
    } catch (e) {
      throw new Error(`case ${i}: ${(e as Error).message}\n${JSON.stringify(text)}`);
    }
    equal(formatHl7(json), text, `case ${i}: ${JSON.stringify(text)}`);
    deepEqual(parseHl7(formatHl7(json)), json, `case ${i}`);
  }
});

Deno.test("property: changed leaves (delimiters, line breaks inside) survive JSON -> ER7 -> JSON", async () => {
  const rnd = random(4);
  const values = ["a|b", "c^d", "e&f", "g~h", "two\nlines", "cr\rhere", "plain", "日本|^&~"];
  for (const { name, text } of await hl7Samples()) {
    const json = parseHl7(text);
    let changed = 0;
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (typeof node === "object" && node !== null) {
        const obj = node as Record<string, unknown>;
        for (const key of Object.keys(obj)) {
          if (typeof obj[key] === "string" && /^\d+(\.\d+)?$/.test(key) && rnd() < 0.3) {
            obj[key] = values[Math.floor(rnd() * values.length)];
            changed++;
          } else walk(obj[key]);
        }
      }
    };
    const messages = isHl7Batch(json) ? json.batches.flatMap((b) => b.messages) : [json];
    // Keep MSH-1/MSH-2 (the delimiters) and the header segments as they are.
    for (const m of messages) {
      for (const [seg, list] of Object.entries(m.segments)) if (seg !== "MSH") walk(list);
    }
    ok(changed > 0, name);
    const again = parseHl7(formatHl7(json));
    // Line breaks have no raw form in a leaf: they come back as the \X0D\ and \X0A\ escapes.
    const expected = JSON.parse(
      JSON.stringify(
        json,
        (k, v) =>
          typeof v === "string" && k !== "terminator"
            ? v.replaceAll("\r", "\\X0D\\").replaceAll("\n", "\\X0A\\")
            : v,
      ),
    );
    deepEqual(again, expected, name);
  }
});

Deno.test("scale: an 8 MB OBX and 20,000 segments are read and written back", () => {
  const big = `MSH|^~\\&|A\rOBX|1|ED|||${"QUJD".repeat(2_000_000)}\r`;
  equal(formatHl7(parseHl7(big)), big);
  const many = "MSH|^~\\&|A\r" + "OBX|1|NM|x^y||42|mg|1-2|N\r".repeat(20_000);
  const json = parseHl7(many);
  equal(!isHl7Batch(json) && json.segments.OBX.length, 20_000);
  equal(formatHl7(json), many);
});
