/**
 * Shift in WebAssembly (shift_wasm.ts, wasm/shift.c) against shift on parsed values and the
 * generated JavaScript: which specs it covers, that it really runs them (wasmShiftRuns), where
 * it hands a document back to JavaScript, and the parts of shift.c that JavaScript objects give
 * for free (conflict arrays, key order, writing into copied input containers, memory).
 */

import { deepStrictEqual, strictEqual } from "node:assert";
import { compile } from "./mod.ts";
import { wasmShiftRuns } from "./raw_json.ts";
import { ShiftOp } from "./shift.ts";
import { synthetic } from "../../bench/jolt/main.ts";
import { prng } from "./test_support.ts";
import shiftCases from "./testdata/jolt_shift.json" with { type: "json" };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What WebAssembly writes (asserting that it ran, or declined when `declines`), checked. */
function inWasm(spec: unknown, input: string, declines = false): string {
  const op = new ShiftOp(spec);
  strictEqual(op.inWasm, true, `not covered: ${JSON.stringify(spec)}`);
  const bytes = encoder.encode(input);
  const before = { ...wasmShiftRuns };
  const out = decoder.decode(op.applyJson(bytes)!);
  deepStrictEqual(
    { done: wasmShiftRuns.done - before.done, declined: wasmShiftRuns.declined - before.declined },
    declines ? { done: 0, declined: 1 } : { done: 1, declined: 0 },
    `${JSON.stringify(spec)} on ${input}`,
  );
  const parsed = JSON.stringify(compile([{ operation: "shift", spec }]).apply(JSON.parse(input)));
  strictEqual(out, parsed ?? "null", `${JSON.stringify(spec)} on ${input}`);
  strictEqual(decoder.decode(op.applyJson(bytes, false)!), out);
  return out;
}

Deno.test("shift in WebAssembly: the JOLT fixtures it covers, and those left to JavaScript", () => {
  const left: string[] = [];
  let covered = 0;
  for (const c of shiftCases as { name: string; spec: unknown; specError?: boolean }[]) {
    if (c.specError) continue;
    if (new ShiftOp(c.spec).inWasm) covered++;
    else left.push(c.name);
  }
  // `&` on the left and stars with more than one `*` are JavaScript's (the comparisons run in
  // raw_json_test.ts).
  strictEqual(covered >= 59, true, `only ${covered} covered`);
  deepStrictEqual(left.sort(), ["lhsAmpMatch", "wildcards"]);
});

Deno.test("shift in WebAssembly: the benchmark's 20-rule shift runs there", () => {
  const { input, spec } = synthetic();
  inWasm((spec[0] as { spec: unknown }).spec, JSON.stringify(input));
});

Deno.test("shift in WebAssembly: values meeting at one output become arrays, as in JOLT", () => {
  strictEqual(
    inWasm({ a: "x", b: "x", c: "x" }, '{"a":1,"b":"two","c":[3]}'),
    '{"x":[1,"two",[3]]}',
  );
  // A null is replaced by what comes after it, not joined into an array.
  strictEqual(inWasm({ a: "x", b: "x" }, '{"a":null,"b":2}'), '{"x":2}');
  strictEqual(inWasm({ a: "x", b: "x" }, '{"a":1,"b":null}'), '{"x":[1,null]}');
  // An array written first takes the next values in; an object becomes the first element.
  strictEqual(inWasm({ a: "x", b: "x" }, '{"a":[1],"b":2}'), '{"x":[1,2]}');
  strictEqual(inWasm({ a: "x.y", b: "x" }, '{"a":1,"b":2}'), '{"x":[{"y":1},2]}');
  // Once an object was made an array element, writes through its path clash and are dropped.
  strictEqual(inWasm({ a: "x.y", b: "x", c: "x.z" }, '{"a":1,"b":2,"c":3}'), '{"x":[{"y":1},2]}');
  // Indexes pad with nulls, and appends add.
  strictEqual(
    inWasm({ a: "x[2]", b: "x[]", c: "x[0]" }, '{"a":1,"b":2,"c":3}'),
    '{"x":[3,null,1,2]}',
  );
});

Deno.test("shift in WebAssembly: output keys come in the order JavaScript objects give them", () => {
  // Keys from spec constants: "4294967294" is the largest array index, "01" is not one.
  strictEqual(
    inWasm({ a: "o.4294967294", b: "o.4294967295", c: "o.3" }, '{"a":1,"b":2,"c":3}', true),
    '{"o":{"3":3,"4294967294":1,"4294967295":2}}',
  );
  strictEqual(
    inWasm(
      { a: "o.b", b: "o.10", c: "o.a", d: "o.2", e: "o.01", f: "o.1" },
      '{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}',
    ),
    '{"o":{"1":6,"2":4,"10":2,"b":1,"a":3,"01":5}}',
  );
  // Indexes of array elements as keys.
  strictEqual(
    inWasm(
      { "*": { "*": "byIndex.&" } },
      '{"l":["a","b","c","d","e","f","g","h","i","j","k","l"]}',
    ),
    '{"byIndex":{"0":"a","1":"b","2":"c","3":"d","4":"e","5":"f","6":"g","7":"h","8":"i","9":"j","10":"k","11":"l"}}',
  );
});

Deno.test("shift in WebAssembly: writing into a container copied from the input", () => {
  strictEqual(
    inWasm({ a: "x", b: "x.extra" }, '{"a":{"k":1,"l":[2]},"b":3}'),
    '{"x":{"k":1,"l":[2],"extra":3}}',
  );
  strictEqual(
    inWasm({ a: "x", b: "x.l[]" }, '{"a":{"k":1,"l":[2]},"b":3}'),
    '{"x":{"k":1,"l":[2,3]}}',
  );
  strictEqual(inWasm({ a: "x", b: "x" }, '{"a":[1,{"m":null}],"b":3}'), '{"x":[1,{"m":null},3]}');
  strictEqual(inWasm({ a: "x", b: "x.k" }, '{"a":{"k":1},"b":2}'), '{"x":{"k":[1,2]}}');
  // A copied container written whole after a write into it stays as it was in the input.
  strictEqual(inWasm({ a: "x", b: "y" }, '{"a":{"k":1},"b":{"k":1}}'), '{"x":{"k":1},"y":{"k":1}}');
});

Deno.test("shift in WebAssembly: $, #, @, @(n,path), scalars matched as keys, & and its parts", () => {
  inWasm({ "*": { "$": "keys[]", "@": "values[]" } }, '{"a":{"b":1},"c":[2,3],"d":"e"}');
  inWasm({ "*": { "$1": "parents[]", "#fixed": "constant" } }, '{"a":{"b":1},"c":{"d":2}}');
  inWasm(
    { "items": { "*": { "@(1,name)": "names.&1", "@(2,id)": "ids[]" } }, "id": "i" },
    '{"id":7,"items":[{"name":"n1"},{"name":"n2"}]}',
  );
  inWasm(
    { "status": { "open": { "#yes": "isOpen" }, "*": { "$": "other" } } },
    '{"status":"open"}',
  );
  inWasm(
    { "status": { "open": { "#yes": "isOpen" }, "*": { "$": "other" } } },
    '{"status":"closed"}',
  );
  inWasm({ "flag": { "true": { "#on": "flag" }, "false": { "#off": "flag" } } }, '{"flag":false}');
  inWasm({ "tag-*-x": "tags.&(0,1)", "*": "rest.&-&" }, '{"tag-a-x":1,"tag--x":2,"b":3}');
  inWasm(
    { "rows": { "*": { "v": "out[&1].v", "w": "out[&(1,0)].w" } } },
    '{"rows":[{"v":1,"w":2},{"v":3}]}',
  );
  inWasm({ "*": { "*": { "*": "deep.&2.&1.&" } } }, '{"a":{"b":{"c":1,"d":[1]}},"e":{"f":{}}}');
});

Deno.test("shift in WebAssembly: [#n] counts the matches n levels up, as the walker does", () => {
  // Maps to lists: each photo's index among those matched so far.
  inWasm(
    { photos: { "*": { url: "list[#2].url", "$": "list[#2].id" } } },
    '{"photos":{"p1":{"url":"a.jpg"},"p2":{"url":"b.jpg"},"p3":{}}}',
  );
  // `$`, `#` and `@` leaves do not count; an `@(…)` level matches as its parent and shares its
  // count, so the keys matched under it count for the parent too (index 3, not 1).
  strictEqual(
    inWasm(
      { "*": { "@(0,inner)": { "*": "found[#1]" }, "x": "xs[#1]", "#c": "c[#1]" } },
      '{"a":{"inner":{"p":1,"q":2},"x":"X"}}',
    ),
    '{"found":[1,2],"c":[null,null,null,"c"],"xs":[null,null,null,"X"]}',
  );
});

Deno.test("shift in WebAssembly: lookups whose paths use the walked keys", () => {
  // A parallel array read at the current index, and a table read at the current key.
  strictEqual(
    inWasm(
      { items: { "*": { name: "names.@(3,ids[&1])" } } },
      '{"ids":["a","b"],"items":[{"name":"x"},{"name":"y"},{"name":"z"}]}',
    ),
    '{"names":{"a":"x","b":"y"}}',
  );
  strictEqual(
    inWasm(
      { refs: { "*": { "@(2,lookup.&)": "resolved.&" } } },
      '{"lookup":{"a":1,"b":{"deep":true}},"refs":{"a":"x","b":"y","c":"z"}}',
    ),
    '{"resolved":{"a":1,"b":{"deep":true}}}',
  );
  // An index that does not resolve finds nothing (and writes nothing).
  inWasm(
    { items: { "*": { "*": { "@(4,ids[&1])": "found[]" } } } },
    '{"ids":["a"],"items":{"k":{"v":"s"}}}',
  );
});

Deno.test("shift in WebAssembly: output keys and indexes read from the data", () => {
  const spec = { "*": { "@": "byId.@(1,id)", "name": "names[@(1,i)]" } };
  strictEqual(
    inWasm(spec, '{"a":{"id":"x","name":"A","i":"1"},"b":{"id":true,"name":"B","i":"0"}}'),
    '{"byId":{"x":{"id":"x","name":"A","i":"1"},"true":{"id":true,"name":"B","i":"0"}},"names":["B","A"]}',
  );
  // Nothing is written for a missing, null or container value, or an index that is not one.
  inWasm(
    spec,
    '{"a":{"name":"A"},"b":{"id":null,"i":null},"c":{"id":{"k":1},"i":"x"},"d":{"id":[1]}}',
  );
  // A string id that is an array index orders first, as in a JavaScript object.
  inWasm({ "*": { "@": "byId.@(1,id)" } }, '{"a":{"id":"z"},"b":{"id":"7"}}');
  // Java spells numbers: a numeric id goes back to JavaScript.
  inWasm(spec, '{"a":{"id":12,"name":"A"}}', true);
});

Deno.test("shift in WebAssembly: what it hands back to JavaScript mid-way", () => {
  // Numbers JavaScript respells, strings with escapes, keys that are not ASCII.
  inWasm({ a: "x" }, '{"a":1.50}', true);
  inWasm({ a: "x" }, '{"a":"line\\nbreak"}', true);
  inWasm({ "*": "x.&" }, '{"caf\u00e9":1}', true);
  // A number matched as a key takes Java's spelling of it.
  inWasm({ a: { "1": { "#one": "x" } } }, '{"a":1}', true);
  // Untouched, they are no reason to decline.
  inWasm({ b: "x" }, '{"a":1.50,"b":"ok","c":"line\\nbreak"}');
});

Deno.test("shift in WebAssembly: objects of more than 512 members are left to JavaScript", () => {
  const members = (n: number) =>
    JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
  inWasm({ "*": "out.&" }, members(512));
  inWasm({ "*": "out.&" }, members(513), true);
  // Also when the object comes from the input and something is written into it.
  inWasm({ a: "x", b: "x.extra" }, `{"a":${members(600)},"b":1}`, true);
});

Deno.test("shift in WebAssembly: documents of other sizes and other specs in between", () => {
  const a = { "*": "a.&" };
  const b = { "rows": { "*": { "id": "ids[]" } } };
  const small = '{"k":1,"l":"two"}';
  const rows = JSON.stringify({
    rows: Array.from({ length: 20_000 }, (_, i) => ({ id: `r${i}` })),
  });
  // The program is loaded again after a scan of another size moved (or wrote over) it.
  for (let i = 0; i < 3; i++) {
    inWasm(a, small);
    inWasm(b, rows);
    inWasm(a, small);
    inWasm(b, '{"rows":[{"id":1}]}');
  }
});

Deno.test("shift in WebAssembly: a large output grows the module's memory, then small ones still work", () => {
  // Every value written twice: the output is about twice the input (near the 1 MiB scan limit).
  const spec = { rows: { "*": { "@": ["a[]", "b[]"] } } };
  const rows = Array.from(
    { length: 14_000 },
    (_, i) => ({ id: `row-${i}`, n: i, tags: ["x", "y"] }),
  );
  const input = JSON.stringify({ rows });
  strictEqual(input.length > 400_000, true);
  const out = inWasm(spec, input);
  strictEqual(out.length > 2 * input.length - 100, true);
  inWasm(spec, '{"rows":[{"id":1}]}');
});

/** A random shift spec from the forms shift.c covers (and some it does not). */
function randomSpec(rand: () => number, depth: number): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const segment = () =>
    pick([
      "out",
      "x",
      "y",
      "&",
      "&1",
      "&(0,1)",
      "&(1,1)",
      "x[&1]",
      "y[]",
      "z[#2]",
      "z[#1]",
      "@(1,id)",
      "w[@(1,id)]",
      "v[1]",
      "k-&",
      "@(1,&)",
      "@(2,&1)",
      "u[@(1,a[&1])]",
      "@(2,a.&)",
    ]);
  const path = () => Array.from({ length: 1 + Math.floor(rand() * 3) }, segment).join(".");
  const spec: Record<string, unknown> = {};
  const entries = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < entries; i++) {
    const key = pick([
      "id",
      "name",
      "a",
      "b",
      "0",
      "*",
      "tag-*",
      "a|b",
      "@",
      "$",
      "$1",
      "#lit",
      "@(1,id)",
      "@(1,&)",
      "@(2,b[&1])",
    ]);
    const special = key.startsWith("@") || key.startsWith("$") || key.startsWith("#");
    // `@(…)` keys may also hold a spec (the walk goes on in the data they find).
    const composite = !special || (key.startsWith("@(") && rand() < 0.3);
    if (composite && depth < 3 && rand() < 0.45) spec[key] = randomSpec(rand, depth + 1);
    else if (rand() < 0.15) spec[key] = [path(), path()];
    else if (rand() < 0.05) spec[key] = null;
    else spec[key] = path();
  }
  return spec;
}

/** A random document shift.c can finish (no number spellings or escapes to redo). */
function randomDoc(rand: () => number, depth: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const r = rand();
  if (depth > 3 || r < 0.4) return pick(["x", "7", "true", "tag-q", 3, 0, -12, true, false, null]);
  if (r < 0.6) {
    return Array.from({ length: Math.floor(rand() * 4) }, () => randomDoc(rand, depth + 1));
  }
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 5); i > 0; i--) {
    out[pick(["id", "name", "a", "b", "tag-x", "tag-y", "k"])] = randomDoc(rand, depth + 1);
  }
  return out;
}

Deno.test("shift in WebAssembly: 3000 random specs on random documents, as the parsed path writes them", () => {
  const rand = prng(2024);
  let specs = 0;
  let compared = 0;
  const before = wasmShiftRuns.done;
  for (let i = 0; i < 3000; i++) {
    const spec = randomSpec(rand, 0);
    let op: ShiftOp;
    try {
      op = new ShiftOp(spec);
    } catch {
      continue; // a reference the spec cannot have (the generator does not check)
    }
    if (!op.inWasm) continue;
    specs++;
    const chain = compile([{ operation: "shift", spec }]);
    for (let d = 0; d < 8; d++) {
      const text = JSON.stringify(randomDoc(rand, 0));
      const bytes = encoder.encode(text);
      let parsed: string;
      try {
        parsed = JSON.stringify(chain.apply(JSON.parse(text)) ?? null);
      } catch {
        continue; // e.g. an index over the limit: the raw paths must fail too
      }
      const raw = op.applyJson(bytes);
      if (raw === null) continue;
      compared++;
      const where = `${JSON.stringify(spec)} on ${text}`;
      strictEqual(decoder.decode(raw), parsed, where);
      strictEqual(decoder.decode(op.applyJson(bytes, false)!), parsed, `JavaScript: ${where}`);
    }
  }
  strictEqual(specs > 800, true, `only ${specs} specs ran in WebAssembly`);
  strictEqual(
    wasmShiftRuns.done - before > 5000,
    true,
    `only ${wasmShiftRuns.done - before} runs finished there`,
  );
  strictEqual(compared > 6000, true, `only ${compared} comparisons`);
});
