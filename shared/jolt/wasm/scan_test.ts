/**
 * The WebAssembly scanner against the JavaScript one: for the same bytes, the same verdict and
 * the same tape, container ends and key texts (raw_json_test.ts runs the behaviour tests on both).
 */

import { deepStrictEqual, notStrictEqual, strictEqual } from "node:assert";
import { Kind, type RawDoc, scanJson, scanJsonInJs } from "../raw_json.ts";
import { looseText, mutated, prng, randomValue } from "../test_support.ts";
import { DECLINED, RETRY_IN_JS, WASM_SCAN_MAX, wasmScanner } from "./mod.ts";
import { SCAN_WASM_COMPILER } from "./scan_module.ts";

const encoder = new TextEncoder();
const REC = 4;

function scanner() {
  const wasm = wasmScanner();
  if (wasm === null) throw new Error("the WebAssembly scanner did not load");
  return wasm;
}

/** What the WebAssembly scanner made of `bytes`, as the JavaScript scanner's terms. */
type Verdict = "declined" | "retry" | {
  tape: number[];
  ends: (number | null)[];
  keys: (string | undefined)[];
};

/** The WebAssembly scan's verdict; a tape is read through scanJson, which finishes it. */
function wasmVerdict(bytes: Uint8Array): Verdict {
  const records = scanner().scan(bytes);
  if (records === DECLINED) return "declined";
  if (records === RETRY_IN_JS) return "retry";
  const verdict = jsVerdict(scanJson(bytes));
  strictEqual(typeof verdict === "object" && verdict.tape.length, records * REC);
  return verdict;
}

/** Ends are only meaningful for container records (values, not keys); the rest is scratch. */
function containerEnds(tape: ArrayLike<number>, ends: ArrayLike<number>, records: number) {
  const out: (number | null)[] = new Array(records).fill(null);
  const visit = (node: number): number => {
    const kind = tape[node * REC];
    if (kind === Kind.Object) {
      out[node] = ends[node];
      let k = node + 1;
      for (let n = tape[node * REC + 2]; n > 0; n--) k = visit(k + 1);
      return k;
    }
    if (kind === Kind.Array) {
      out[node] = ends[node];
      let e = node + 1;
      for (let n = tape[node * REC + 2]; n > 0; n--) e = visit(e);
      return e;
    }
    return node + 1;
  };
  visit(0);
  return out;
}

function jsVerdict(doc: RawDoc | null): Verdict {
  if (doc === null) return "declined";
  const records = doc.tape[3];
  const tape = [...doc.tape.subarray(0, records * REC)];
  const keys: (string | undefined)[] = [];
  doc.keys.forEach((text, k) => keys[k] = text);
  return { tape, ends: containerEnds(tape, doc.ends, records), keys };
}

/** Asserts that both scanners agree on `bytes`; returns the WebAssembly verdict. */
function agree(bytes: Uint8Array): Verdict {
  const wasm = wasmVerdict(bytes);
  const js = jsVerdict(scanJsonInJs(bytes));
  const what = new TextDecoder().decode(bytes).slice(0, 200);
  if (wasm === "retry") {
    // Left to JavaScript only at a key with escapes.
    strictEqual(bytes.includes(0x5c), true, what);
  } else {
    deepStrictEqual(wasm, js, what);
  }
  deepStrictEqual(jsVerdict(scanJson(bytes)), js, what);
  return wasm;
}

Deno.test("wasm scan: the committed module loads and names its compiler", () => {
  scanner();
  strictEqual(/clang/.test(SCAN_WASM_COMPILER), true);
});

Deno.test("wasm scan: the same tapes as the JavaScript scanner on generated documents", () => {
  const rand = prng(21);
  const seen = { declined: 0, retry: 0, taken: 0 };
  for (let i = 0; i < 3000; i++) {
    const value = randomValue(rand, 0);
    for (const text of [looseText(value, rand), JSON.stringify(value)]) {
      const v = agree(encoder.encode(text));
      if (typeof v === "string") seen[v]++;
      else seen.taken++;
    }
  }
  // Each outcome happens often enough to be tested.
  for (const [outcome, count] of Object.entries(seen)) {
    strictEqual(count > 100, true, `${outcome}: ${count}`);
  }
});

Deno.test("wasm scan: the same verdicts on mutated bytes", () => {
  const rand = prng(23);
  let taken = 0;
  for (let i = 0; i < 4000; i++) {
    const bytes = mutated(encoder.encode(looseText(randomValue(rand, 0), rand)), rand, 0.7);
    if (typeof agree(bytes) !== "string") taken++;
    // Every prefix of a document is a document that ends early.
    agree(bytes.subarray(0, Math.floor(rand() * bytes.length)));
  }
  strictEqual(taken > 150, true, `only ${taken} mutated documents were taken`);
});

Deno.test("wasm scan: numbers, literals, UTF-8 and limits as the JavaScript scanner sees them", () => {
  const texts = [
    "0",
    "-0",
    "1.50",
    "0.000001",
    "0.0000001",
    "123456789012345",
    "1234567890123456",
    "1e5",
    "[1E+2,-1e-2,0.1,-0.5,10.25]",
    // Doubted by the digits, settled by writing them back: kept, or respelled (then the
    // containers around them are no longer copied whole).
    "[0.30000000000000004,9007199254740992,1e+21,1.5e-7,[{}]]",
    '[1,[2.5e+0],{"a":[1e+21],"b":[3]},[0.1]]',
    '{"x":[12345678901234567,{"y":[1]}],"z":[9007199254740993]}',
    "[true,false,null]",
    "[tru]",
    "[nul]",
    "[fals]",
    '{"a":1,"b":{"a":2},"c":[{"a":3,"a":4}]}',
    '{"0":1}',
    '{"4294967294":1}',
    '{"4294967295":1}',
    '{"00":1,"-1":2,"1.0":3}',
    '{"é":1,"ü":{"é":2},"日本":"語"}',
    '{"é":1,"é":2}',
    '"\\ud83d\\ude00 \\u00e9 \\n"',
    '"\\u12"',
    '"\\x"',
    "\ufeff[1]",
    ' \t\r\n[ 1 , { "a" : [ ] } ] \n',
    "[" + "[".repeat(255) + "]".repeat(255) + "]",
    "[" + "[".repeat(256) + "]".repeat(256) + "]",
  ];
  for (const text of texts) agree(encoder.encode(text));
  for (
    const bytes of [
      Uint8Array.of(0x22, 0xc3, 0x22),
      Uint8Array.of(0x22, 0xf4, 0x90, 0x80, 0x80, 0x22),
      Uint8Array.of(0x22, 0xf0, 0x9f, 0x98, 0x80, 0x22),
      Uint8Array.of(0x7b, 0x22, 0xe2, 0x82, 0xac, 0x22, 0x3a, 0x31, 0x7d),
      Uint8Array.of(0x22, 0x00, 0x22),
      Uint8Array.of(0x22, 0x7f, 0x22),
    ]
  ) {
    agree(bytes);
  }
});

Deno.test("wasm scan: bytes left from a longer document never complete a shorter one", () => {
  const wasm = scanner();
  notStrictEqual(wasm.scan(encoder.encode('{"a":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}')), DECLINED);
  for (const text of ['{"a":"bbbb', '{"a":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"', '{"a":tr', "[1"]) {
    strictEqual(wasm.scan(encoder.encode(text)), DECLINED, text);
  }
});

Deno.test("wasm scan: memory grows for a large document; past WASM_SCAN_MAX the JavaScript scanner runs", () => {
  const rows = (n: number) =>
    JSON.stringify({ rows: Array.from({ length: n }, (_, i) => ({ id: `r${i}`, v: [i, "é"] })) });
  const large = encoder.encode(rows(20_000));
  strictEqual(large.length > 256 * 1024 && large.length <= WASM_SCAN_MAX, true);
  strictEqual(typeof agree(large), "object");
  strictEqual(typeof agree(encoder.encode('{"small":[1,2]}')), "object");
  const huge = encoder.encode(rows(60_000));
  strictEqual(huge.length > WASM_SCAN_MAX, true);
  deepStrictEqual(jsVerdict(scanJson(huge)), jsVerdict(scanJsonInJs(huge)));
});

Deno.test("wasm scan: a doubted number JavaScript keeps is remembered, one it re-spells is not", () => {
  // 0.1 + 0.7 is written 0.7999999999999999 (16 digits: doubted, kept); 12345678901234567 is
  // written 12345678901234568 (doubted, re-spelled). Numbers no other test uses.
  const bytes = encoder.encode("[0.7999999999999999,12345678901234567]");
  const wasm = scanner();
  wasm.scan(bytes);
  deepStrictEqual([...wasm.doubtedNumbers()], [1, 2]);
  const doc = scanJson(bytes)!;
  deepStrictEqual([doc.kind(1), doc.kind(2)], [Kind.Int, Kind.Number]);
  wasm.scan(bytes);
  deepStrictEqual([...wasm.doubtedNumbers()], [2]);
  agree(bytes);
});
