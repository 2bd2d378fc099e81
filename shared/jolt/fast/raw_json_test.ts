/**
 * The raw JSON path: the tape scanner against JSON.parse (what it accepts, what it hands back to
 * the parsed path), the writer against JSON.stringify, and shift on bytes against shift on
 * parsed values, on hand-picked and on generated documents.
 */

import { deepStrictEqual, strictEqual } from "node:assert";
import { compile } from "../mod.ts";
import { JsonWriter, keyHash, Kind, type RawDoc, scanJson } from "./raw_json.ts";
import { cpuGrowth } from "../../../tests/support/cpu_scaling.ts";
import { fastShiftOf, looseText, mutated, prng, randomValue } from "../../../tests/support/jolt.ts";
import shiftCases from "../testdata/jolt_shift.json" with { type: "json" };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Scanner = (bytes: Uint8Array) => RawDoc | null;

/** The scanner, with its own fresh scratch buffers on every call. */
const SCANNERS: [string, Scanner][] = [["scanJson", (bytes) => scanJson(bytes)]];

/** What the raw path writes for a whole document. */
function rewrite(bytes: Uint8Array, scan: Scanner = scanJson): string | null {
  const doc = scan(bytes);
  if (doc === null) return null;
  const w = new JsonWriter(16);
  doc.write(w, 0);
  return decoder.decode(w.result());
}

/** What the parsed path writes: JSON.stringify(JSON.parse(text)). */
function canonical(bytes: Uint8Array): string {
  return JSON.stringify(JSON.parse(decoder.decode(bytes)));
}

/**
 * Shift on bytes and shift on the parsed value, as the transform middleware would run them; the
 * bytes path is also run on a fresh fast path (its own buffers): both bytes paths must agree.
 */
function bothPaths(spec: unknown, bytes: Uint8Array): { raw: string | null; parsed: string } {
  const compiled = compile([{ operation: "shift", spec }]);
  const raw = compiled.applyJson(bytes);
  const parsed = JSON.stringify(compiled.apply(JSON.parse(decoder.decode(bytes))) ?? null);
  const fresh = fastShiftOf(spec)?.run(bytes) ?? null;
  strictEqual(
    fresh && decoder.decode(fresh),
    raw && decoder.decode(raw),
    `fresh fast path: ${JSON.stringify(spec)}`,
  );
  return { raw: raw && decoder.decode(raw), parsed };
}

const VALID = [
  "{}",
  "[]",
  '"text"',
  "0",
  "-0",
  "true",
  "false",
  "null",
  ' \t\r\n{ "a" : [ 1 , 2 , { } , [ ] ] , "b" : null } \n',
  '{"n":[0,-0,1.0,1.50,-2.5,1e2,1E-7,2e+3,0.000001,0.0000001,123456789012345678,9007199254740993]}',
  '{"n":[16.990000000000002,0.1,0.30000000000000004,1.7976931348623157e308,5e-324,1e400,-1e400]}',
  '{"s":"caf\\u00e9 \\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t \\ud83d\\ude00","k\\u0041":1}',
  '{"é":"ü","日本":"語","emoji":"😀"}',
  '{"\\u0030":"escaped index-like key stays JSON.parse-ordered only if not an index"}',
  '{"__proto__":{"x":1},"constructor":"c","toString":2}',
  '{"a":{"b":{"c":{"d":[[[[["deep"]]]]]}}}}',
  '{"01":"not an index","4294967295":"not an index either","-1":"no","1.5":"no"}',
  "\ufeff" + '{"bom":true}',
];

for (const [scanner, scan] of SCANNERS) {
  Deno.test(`raw JSON (${scanner} scan): valid documents are written exactly as JSON.stringify(JSON.parse()) writes them`, () => {
    for (const text of VALID) {
      const bytes = encoder.encode(text);
      const out = rewrite(bytes, scan);
      if (text.includes("\\u0030")) {
        // "\u0030" is the key "0": an array index, which JavaScript objects order first.
        strictEqual(out, null, text);
        continue;
      }
      strictEqual(out, canonical(bytes), text);
      deepStrictEqual(scan(bytes)!.value(0), JSON.parse(decoder.decode(bytes)), text);
    }
  });
}

const INVALID = [
  "",
  "   ",
  "{",
  "[1,]",
  '{"a":1,}',
  "{a:1}",
  "{'a':1}",
  '{"a" 1}',
  '{"a":1 "b":2}',
  "[1 2]",
  "01",
  "1.",
  ".5",
  "+1",
  "-",
  "1e",
  "1e+",
  "NaN",
  "Infinity",
  "tru",
  "nul",
  "falsey",
  '"unterminated',
  '"bad \\x escape"',
  '"short \\u12 escape"',
  '"tab\there"',
  '"newline\nhere"',
  "[] []",
  "{}}",
  "[[]",
  '{"a":1}x',
];

for (const [scanner, scan] of SCANNERS) {
  Deno.test(`raw JSON (${scanner} scan): what JSON.parse rejects, the scan hands back to the parsed path`, () => {
    for (const text of INVALID) {
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      strictEqual(parses, false, `fixture ${JSON.stringify(text)} should be invalid JSON`);
      strictEqual(scan(encoder.encode(text)), null, JSON.stringify(text));
    }
  });
}

for (const [scanner, scan] of SCANNERS) {
  Deno.test(`raw JSON (${scanner} scan): valid documents that read differently as objects take the parsed path`, () => {
    const declined: [string, Uint8Array][] = [
      ["a repeated key (JSON.parse keeps the last value)", encoder.encode('{"a":1,"b":2,"a":3}')],
      ["a repeated escaped key", encoder.encode('{"a":1,"\\u0061":2}')],
      ["an array-index key (objects list those first)", encoder.encode('{"b":1,"7":2}')],
      ["nesting deeper than 256", encoder.encode("[".repeat(300) + "]".repeat(300))],
      ["a lone continuation byte", Uint8Array.of(0x22, 0x80, 0x22)],
      ["an overlong encoding", Uint8Array.of(0x22, 0xc0, 0x80, 0x22)],
      ["a UTF-16 surrogate", Uint8Array.of(0x22, 0xed, 0xa0, 0x80, 0x22)],
      ["a code point past U+10FFFF", Uint8Array.of(0x22, 0xf5, 0x80, 0x80, 0x80, 0x22)],
      ["a truncated sequence", Uint8Array.of(0x22, 0xe2, 0x82, 0x22)],
    ];
    for (const [what, bytes] of declined) strictEqual(scan(bytes), null, what);
    // Just under the depth limit is fine.
    const deep = encoder.encode("[".repeat(256) + "]".repeat(256));
    strictEqual(rewrite(deep, scan), canonical(deep));
  });

  Deno.test(`raw JSON (${scanner} scan): keyHash is the hash the scan gives keys, ASCII or not, escaped or not`, () => {
    const doc = scan(encoder.encode('{"plain":1,"é日":2,"\\u00e9sc":3}'))!;
    const keys = ["plain", "é日", "ésc"];
    let k = 1;
    for (const key of keys) {
      strictEqual(doc.key(k), key);
      strictEqual(doc.member(0, key, keyHash(key)), k + 1);
      k = doc.next(k + 1);
    }
    strictEqual(doc.member(0, "missing", keyHash("missing")), -1);
  });
}

for (const [scanner, scan] of SCANNERS) {
  Deno.test(`raw JSON (${scanner} scan): 3000 generated documents are written as JSON.stringify(JSON.parse()) writes them`, () => {
    const rand = prng(7);
    let taken = 0;
    for (let i = 0; i < 3000; i++) {
      const value = randomValue(rand, 0);
      const bytes = encoder.encode(looseText(value, rand));
      const out = rewrite(bytes, scan);
      if (out === null) continue; // index-like keys
      taken++;
      strictEqual(out, canonical(bytes), decoder.decode(bytes));
      // Already in JSON.stringify's form: containers are copied as whole byte ranges (escapes
      // aside: the scan does not check that they are spelled as JSON.stringify spells them).
      const compact = JSON.stringify(value);
      strictEqual(rewrite(encoder.encode(compact), scan), compact);
      const compactBytes = encoder.encode(compact);
      const doc = scan(compactBytes)!;
      if ((doc.kind(0) === Kind.Array || doc.kind(0) === Kind.Object) && !compact.includes("\\")) {
        strictEqual(doc.ends[0], compactBytes.length, `not copied whole: ${compact}`);
      }
    }
    strictEqual(taken > 1500, true, `only ${taken} of 3000 took the raw path`);
  });

  Deno.test(`raw JSON (${scanner} scan): mutated bytes are never accepted when JSON.parse rejects them`, () => {
    const rand = prng(11);
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const bytes = encoder.encode(looseText(randomValue(rand, 0), rand));
      const changed = mutated(bytes, rand, 0.8);
      const out = rewrite(changed, scan);
      if (out === null) continue;
      accepted++;
      // Accepted means valid UTF-8 and valid JSON, written as the parsed path would.
      strictEqual(out, canonical(changed), decoder.decode(changed));
    }
    strictEqual(accepted > 100, true, `only ${accepted} mutated documents stayed valid`);
  });
}

const SPECS: unknown[] = [
  { "@": "" },
  { "*": "&" },
  { "*": "all[]" },
  { "*": { "*": "&1.&", "@": "whole.&" } },
  { "*": { "$": "keys[]", "@": "values[]" } },
  { "a": "x", "b": "x", "*": "rest.&" },
  { "id": ["one", "two"], "name": "one" },
  { "*": { "0": "first.&1", "1": "second[]", "*": { "id": "ids[&1]" } } },
  { "tag-*": "tags.&(0,1)", "*": { "@(1,id)": "byId.&1" } },
  { "#const": "c", "name": { "$": "named", "@(1,id)": "ids.@(2,name)" } },
];

Deno.test("shift on bytes writes exactly what shift on parsed values serializes to", () => {
  const rand = prng(5);
  let compared = 0;
  for (let i = 0; i < 600; i++) {
    const bytes = encoder.encode(looseText(randomValue(rand, 0), rand));
    for (const spec of SPECS) {
      const { raw, parsed } = bothPaths(spec, bytes);
      if (raw === null) continue;
      compared++;
      strictEqual(raw, parsed, `${JSON.stringify(spec)} on ${decoder.decode(bytes)}`);
    }
  }
  strictEqual(compared > 3000, true, `only ${compared} comparisons ran`);
});

Deno.test("shift on bytes takes every JOLT shift fixture it compiles, except inputs with index-like keys", () => {
  let compared = 0;
  for (
    const c of shiftCases as { name: string; spec: unknown; input?: unknown; specError?: boolean }[]
  ) {
    if (c.specError) continue;
    const { raw, parsed } = bothPaths(c.spec, encoder.encode(JSON.stringify(c.input ?? null)));
    if (raw === null) {
      const declined = fastShiftOf(c.spec) === null || c.name === "hashDefault";
      strictEqual(declined, true, `${c.name} did not take the raw path`);
      continue;
    }
    compared++;
    strictEqual(raw, parsed, c.name);
  }
  strictEqual(compared >= 55, true, `${compared} fixtures compared`);
});

Deno.test("applyJson: only a lone shift works on bytes; other chains ask for the parsed path", () => {
  const bytes = encoder.encode('{"a":1}');
  strictEqual(
    decoder.decode(compile([{ operation: "shift", spec: { a: "b" } }]).applyJson(bytes)!),
    '{"b":1}',
  );
  strictEqual(compile([{ operation: "default", spec: { c: 1 } }]).applyJson(bytes), null);
  strictEqual(
    compile([{ operation: "shift", spec: { a: "b" } }, { operation: "sort" }]).applyJson(bytes),
    null,
  );
  // Nothing matched: the shift's output is null, as on the parsed path.
  strictEqual(
    decoder.decode(compile([{ operation: "shift", spec: { z: "b" } }]).applyJson(bytes)!),
    "null",
  );
});

Deno.test("shift compiled to JavaScript: most fixtures compile, the rest are parsed for the walker", () => {
  const compiled: string[] = [];
  const walked: string[] = [];
  for (
    const c of shiftCases as { name: string; spec: unknown; specError?: boolean }[]
  ) {
    if (c.specError) continue;
    (fastShiftOf(c.spec) !== null ? compiled : walked).push(c.name);
  }
  // The comparisons run in the fixture test above; this pins which specs the fast path declines.
  deepStrictEqual(walked.sort(), ["lhsAmpMatch", "mapToList", "mapToList2", "wildcards"]);
  strictEqual(compiled.length >= 55, true);
});

Deno.test("shift compiled to JavaScript: keys that look like code or like Object members stay data", () => {
  const keys = [
    '"); throw new Error("x',
    "'",
    "a\nb",
    "\u2028",
    "__proto__",
    "constructor",
    "toString",
    "{x}",
    "`",
    "</script>",
    "a\u007fb",
    "caf\u00e9",
    'q"uote',
    "a-key-longer-than-sixteen-bytes",
  ];
  const spec: Record<string, unknown> = {};
  const input: Record<string, unknown> = {};
  keys.forEach((k, i) => {
    spec[k] = [`out.${k.replaceAll(".", "\\.")}`, `byIndex.${i}`, "all[]"];
    input[k] = i;
  });
  spec["*"] = { "$": "seen.&1" };
  strictEqual(fastShiftOf(spec) !== null, true);
  const bytes = encoder.encode(JSON.stringify(input));
  const { raw, parsed } = bothPaths(spec, bytes);
  strictEqual(raw, parsed);
  const out = JSON.parse(raw!);
  strictEqual(Object.hasOwn(out.out, "__proto__"), true);
  strictEqual(out.out.constructor, 5);
  deepStrictEqual(out.all, keys.map((_, i) => i));
  // Literal keys alone are found by generated member finders (bytes compared in the code).
  const literals = Object.fromEntries(keys.map((k, i) => [k, `found.${i}`]));
  strictEqual(fastShiftOf(literals) !== null, true);
  const found = bothPaths(literals, bytes);
  strictEqual(found.raw, found.parsed);
  deepStrictEqual(Object.values(JSON.parse(found.raw!).found), keys.map((_, i) => i));
});

Deno.test("shift compiled to JavaScript: output objects order their keys as JavaScript objects do", () => {
  // Array-index keys come first, ascending, whatever order they were written in; "01" and
  // "4294967295" are not indexes. Writing each member of "many" twice turns its values into
  // arrays.
  const spec = {
    a: "o.b",
    b: "o.10",
    c: "o.a",
    d: "o.2",
    e: ["o.10", "o.01"],
    f: "o.4294967295",
    g: "o.0",
    m: { "*": ["many.&", "many.&"], "k1*": "many.1&(0,1)" },
  };
  const m: Record<string, number> = {};
  for (let i = 19; i >= 0; i--) m[`k${i}`] = i;
  const input = { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, m };
  strictEqual(fastShiftOf(spec) !== null, true);
  const { raw, parsed } = bothPaths(spec, encoder.encode(JSON.stringify(input)));
  strictEqual(raw, parsed);
  deepStrictEqual(Object.keys(JSON.parse(raw!).o), ["0", "2", "10", "b", "a", "01", "4294967295"]);
  strictEqual(Object.keys(JSON.parse(raw!).many).length, 20);
});

Deno.test("shift compiled to JavaScript: an array element's index as an output key", () => {
  // `&` of an element is its index, written as an element of the output object; a literal such
  // as "00" or "+1" matches an element by its number but keeps its own spelling as a key.
  const specs = [
    { list: { "*": "byIndex.&", "00": "odd.&", "+1": "odd.&", "2": "odd.&" } },
    { list: { "00": "odd.&", "+1": ["odd.&", "odd.&"], "2": "odd.&" } },
    { list: { "*": { "@": "nested.&1.&1" } } },
  ];
  const bytes = encoder.encode('{"list":["a","b","c","d"]}');
  for (const spec of specs) {
    strictEqual(fastShiftOf(spec) !== null, true);
    const { raw, parsed } = bothPaths(spec, bytes);
    strictEqual(raw, parsed, JSON.stringify(spec));
  }
  deepStrictEqual(
    JSON.parse(bothPaths(specs[1], bytes).raw!),
    { odd: { "2": "c", "00": "a", "+1": ["b", "b"] } },
  );
});

Deno.test("shift on bytes: writing into a value copied from the input, and over one", () => {
  const specs = [
    { a: "x", b: { "*": "x.&" } },
    { a: "x", b: "x" },
    { a: "x[0]", b: { "*": "x[0].&" } },
    { a: "x", b: "x[]" },
    // A container written into (a), then turned into a conflict array (b): later writes (c, d)
    // must see the array, not the container they were writing into before.
    { a: "x.y", b: "x", c: "x.z", d: "x[1].w" },
    { a: "x[0].y", b: "x[0]", c: "x[0].z", e: "x[]" },
  ];
  const inputs = [
    '{"a":{"k":1},"b":{"c":2}}',
    '{"a":[1,{"k":2}],"b":{"c":3}}',
    '{"a":"text","b":{"c":4}}',
    '{"a":7,"b":[5,6]}',
    '{"a":{"c":0},"b":{"c":1}}',
    '{"a":1,"b":2,"c":3,"d":4,"e":5}',
  ];
  for (const spec of specs) {
    for (const input of inputs) {
      const { raw, parsed } = bothPaths(spec, encoder.encode(input));
      strictEqual(raw, parsed, `${JSON.stringify(spec)} on ${input}`);
    }
  }
});

Deno.test("shift on bytes: a large document grows the buffers, and small ones after it still work", () => {
  const rows = Array.from({ length: 40_000 }, (_, i) => ({
    id: `row-${i}`,
    n: i / 7,
    tags: ["a", "b\u00e9"],
    nested: { deep: [i, { k: i % 3 === 0 ? null : true }] },
  }));
  const big = encoder.encode(JSON.stringify({ rows }));
  strictEqual(big.length > 3_000_000, true);
  const spec = { rows: { "*": { id: "ids[]", nested: "byId.@(1,id)" } }, "@": "copy" };
  const op = fastShiftOf(spec)!;
  const chain = compile([{ operation: "shift", spec }]);
  for (const bytes of [big, encoder.encode('{"rows":[{"id":"x","n":1}]}'), big]) {
    const parsed = JSON.stringify(chain.apply(JSON.parse(decoder.decode(bytes))));
    strictEqual(decoder.decode(op.run(bytes)!), parsed);
  }
});

Deno.test("JsonWriter results: small ones share the writer's buffer without overlapping, large ones stand alone", () => {
  const w = new JsonWriter(16);
  const results: { bytes: Uint8Array; text: string }[] = [];
  // Enough results to fill several buffers, each a different length; some outputs are dropped
  // (reset without taking the result), and outputs that outgrow the buffer move to a new one.
  for (let i = 0; i < 400; i++) {
    w.reset();
    if (i % 7 === 0) {
      w.text("dropped".repeat(i));
      w.reset();
    }
    const text = JSON.stringify({ i, pad: "x".repeat(i * 3) });
    w.text(text);
    results.push({ bytes: w.result(), text });
  }
  for (const r of results) strictEqual(decoder.decode(r.bytes), r.text);
  // Views into one buffer: writing into one result leaves its neighbours alone.
  const at = results.findIndex((r, i) => r.bytes.buffer === results[i + 1]?.bytes.buffer);
  strictEqual(at >= 0, true);
  const [a, b] = [results[at], results[at + 1]];
  a.bytes.fill(0x20);
  strictEqual(decoder.decode(b.bytes), b.text);
  w.reset();
  w.text("y".repeat(10_000));
  const large = w.result();
  strictEqual(large.byteOffset, 0);
  strictEqual(large.buffer.byteLength, 10_000);
  // The space a large result was copied out of is used again.
  w.reset();
  w.text('"z"');
  strictEqual(decoder.decode(w.result()), '"z"');
  strictEqual(decoder.decode(results[results.length - 1].bytes), results[results.length - 1].text);
});

Deno.test("raw JSON: duplicate keys are found in large objects too (escaped spellings included)", () => {
  const members = Array.from({ length: 200 }, (_, i) => `"k${i}":${i}`);
  const plain = encoder.encode(`{${members.join(",")}}`);
  strictEqual(scanJson(plain) !== null, true);
  for (const dup of [`"k7":0`, `"k\\u0037":0`, `"k199":0`]) {
    strictEqual(scanJson(encoder.encode(`{${[...members, dup].join(",")}}`)), null, dup);
  }
  // Nested objects keep their own key sets.
  const nested = `{"a":{${members.join(",")}},"b":{${members.join(",")}}}`;
  strictEqual(scanJson(encoder.encode(nested)) !== null, true);
});

Deno.test("raw JSON: the shift on bytes is linear in the number of keys (100,000 keys)", () => {
  const chain = compile([{ operation: "shift", spec: { "*": "out.&", zzz: "z" } }]);
  const body = (n: number) =>
    encoder.encode(
      JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
    );
  const small = body(10_000);
  const large = body(100_000);
  // Timed in CPU time: a busy machine's wait for a core is not growth.
  const { ratio, linear } = cpuGrowth(
    () => strictEqual(chain.applyJson(small) !== null, true),
    () => strictEqual(chain.applyJson(large) !== null, true),
    50,
  );
  // Ten times the keys: about ten times the time. The quadratic scan took about 100 times.
  strictEqual(linear, true, `100k keys took ${ratio.toFixed(1)} times 10k keys`);
});
