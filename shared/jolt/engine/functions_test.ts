/** Tests of the modify functions: each function's results and JOLT's argument conventions. */

import { strictEqual } from "node:assert";
import { FUNCTIONS, JOLT_FUNCTIONS } from "../mod.ts";
import { lookupFunction } from "./functions.ts";
import { ABSENT } from "../json.ts";
import { assertJson, run } from "../../../tests/support/jolt.ts";

/** [arguments, expected result (ABSENT: no value)] */
type Case = [unknown[], unknown];

function check(name: string, cases: Case[]): void {
  const fn = lookupFunction(name);
  if (!fn) throw new Error(`no function ${name}`);
  for (const [args, expected] of cases) {
    assertJson(fn(args), expected, `${name}(${JSON.stringify(args)})`);
  }
}

Deno.test("functions: the full JOLT set is there, plus the documented extensions", () => {
  strictEqual(JOLT_FUNCTIONS.length, 39);
  for (const f of JOLT_FUNCTIONS) strictEqual(FUNCTIONS.includes(f), true, f);
  for (
    const f of [
      "indexOf",
      "isString",
      "isInteger",
      "isLong",
      "isDouble",
      "isBoolean",
      "isList",
      "isMap",
    ]
  ) {
    strictEqual(FUNCTIONS.includes(f), true, f);
  }
});

Deno.test("functions: toLower, toUpper, trim (single values or each list element)", () => {
  check("toLower", [
    [["AbC"], "abc"],
    [[123], ABSENT],
    [[["A", 1, "B"]], ["a", 1, "b"]],
    [["A", "B"], ["a", "b"]],
    [[], ABSENT],
    [[null], ABSENT],
    [[[]], ABSENT],
  ]);
  check("toUpper", [[["straße"], "STRASSE"]]);
  check("trim", [[["  x  "], "x"], [["\t x\n"], "x"], [[1], ABSENT]]);
});

Deno.test("functions: concat", () => {
  check("concat", [
    [["a", 1, null, true, 2.5], "a1true2.5"],
    [["a"], ABSENT], // a single non-list value: concat needs a list
    [[["x", "y"]], "xy"],
    [["a", [1, 2], { k: "v" }], "a[1, 2]{k=v}"],
    [[null, null], ""],
  ]);
});

Deno.test("functions: join (JOLT skips null/empty parts but may leave a trailing separator)", () => {
  check("join", [
    [[",", "a", "b"], "a,b"],
    [[",", ["a", "b"]], "a,b"],
    [[[",", "a", "b"]], "a,b"],
    [[",", "a", null, "b"], "a,b"],
    [[",", "a", "", "b", ""], "a,b,"],
    [[",", "a"], ABSENT],
    [[1, "a", "b"], ABSENT],
    [["-", 1, 2.5, true], "1-2.5-true"],
  ]);
});

Deno.test("functions: split (Java regex split, trailing empty parts dropped)", () => {
  check("split", [
    [[",", "a,b,,c,,"], ["a", "b", "", "c"]],
    [["\\.", "a.b"], ["a", "b"]],
    [["", "abc"], ["a", "b", "c"]],
    [[",", ["a,b", "c"]], [["a", "b"], ["c"]]],
    [[",", "none"], ["none"]],
    [["[", "x"], ABSENT],
    [[",", 5], ABSENT],
    [["\\s+", " lead and  trail "], ["", "lead", "and", "trail"]],
  ]);
});

Deno.test("functions: substring", () => {
  check("substring", [
    [["abcdef", 1, 3], "bc"],
    [[["abc", 0, 1]], "a"],
    [["abc", 0, 4], ABSENT],
    [["abc", 2, 2], ABSENT],
    [["abc", -1, 2], ABSENT],
    [["abc", 1.5, 2], ABSENT],
    [["abc", 1], ABSENT],
  ]);
});

Deno.test("functions: leftPad and rightPad", () => {
  check("leftPad", [
    [["7", 3, "0"], "007"],
    [["abcd", 2, "0"], "abcd"],
    [["a", 3, "00"], ABSENT],
    [["a", 501, "0"], ABSENT],
    [["a", 0, "0"], ABSENT],
    [["a", 3], ABSENT],
    [[5, 3, "0"], ABSENT],
  ]);
  check("rightPad", [[["ab", 4, "-"], "ab--"]]);
});

Deno.test("functions: min and max keep JOLT's Integer/Long/Double rules", () => {
  check("min", [
    [[3, 1, 2], 1],
    [["10", 2], 2],
    [[2, 2.5], 2],
    [[1.5, 2.5], 1.5],
    [["a", "b"], ABSENT],
    [[5], 5],
    [["5"], ABSENT],
  ]);
  check("max", [
    [[3, 1, 2], 3],
    [["10", 2], 10],
    [[2, 2.5], 2], // JOLT compares via longValue(): 2 >= (long) 2.5, so the Integer wins
    [[[-3.5, -4]], -3.5],
    [[5000000000, 7], 5000000000],
    [[[]], ABSENT],
  ]);
});

Deno.test("functions: abs and avg", () => {
  check("abs", [
    [[-5], 5],
    [["-2.5"], 2.5],
    [["x"], ABSENT],
    [[[-1, "x", 2]], [1, "x", 2]],
    [[-2147483648], -2147483648], // Math.abs(Integer.MIN_VALUE) overflows in Java
  ]);
  check("avg", [[[[1, 2, "3", "x"]], 2], [[1, 2], 1.5], [[["x"]], ABSENT], [[5], ABSENT]]);
});

Deno.test("functions: intSum, doubleSum, longSum", () => {
  check("intSum", [
    [[[1, 2.9, "3", "x"]], 6],
    [[2147483647, 1], -2147483648],
    [[["x"]], 0],
    [[5], ABSENT],
  ]);
  check("doubleSum", [[[1, 2.5, "0.5"], 4]]);
  check("longSum", [[[1, 2.9, "3000000000"], 3000000003]]);
});

Deno.test("functions: intSubtract, doubleSubtract, longSubtract", () => {
  check("intSubtract", [[[5, 3], 2], [[5.5, 3], ABSENT], [[1], ABSENT], [[1, 2, 3], ABSENT], [[
    "5",
    3,
  ], ABSENT]]);
  // JSON 10.0 arrives as 10, so doubleSubtract accepts any numbers (see docs/transforms.md).
  check("doubleSubtract", [[[5.5, 2], 3.5], [[10, 3], 7], [["5", 2], ABSENT]]);
  // Numbers in int range are Integers in JOLT, not Longs.
  check("longSubtract", [[[5000000000, 3000000000], 2000000000], [[5, 3], ABSENT]]);
});

Deno.test("functions: divide and divideAndRound (HALF_UP on the exact double)", () => {
  check("divide", [[[10, 4], 2.5], [[10, 0], ABSENT], [["10", "4"], 2.5], [[1, 2, 3], ABSENT], [
    [1],
    ABSENT,
  ]]);
  check("divideAndRound", [
    [[2, 10, 3], 3.33],
    [[0, 5, 2], 3],
    [[2, 1.005, 1], 1], // 1.005 is really 1.00499999999999989…
    [[1, -2.25, 1], -2.3],
    [[2, 10], ABSENT],
    [["2", 10, 3], ABSENT],
  ]);
});

Deno.test("functions: toInteger, toLong, toDouble, toBoolean", () => {
  check("toInteger", [
    [[3.9], 3],
    [[-3.9], -3],
    [["42"], 42],
    [["3.9"], 3],
    [["x"], ABSENT],
    [[true], ABSENT],
    [[3000000000], -1294967296], // Long.intValue keeps the low 32 bits
    [["3000000000.5"], 2147483647], // Double.intValue saturates
    [[["1", "x", 2.5]], [1, "x", 2]],
  ]);
  check("toLong", [[["3000000000"], 3000000000], [[2.9], 2], [["x"], ABSENT]]);
  check("toDouble", [[["2.5"], 2.5], [[2], 2], [["1e3"], 1000], [["1.5f"], 1.5], [["x"], ABSENT]]);
  check("toBoolean", [[["TRUE"], true], [["no"], ABSENT], [[false], false], [[1], ABSENT]]);
});

Deno.test("functions: toString uses Java's formats", () => {
  check("toString", [
    [[1], "1"],
    [[2.5], "2.5"],
    [[0.00001], "1.0E-5"],
    [[123456789.5], "1.234567895E8"],
    [[true], "true"],
    [[[1, null]], ["1", "null"]],
    [[{ a: [1, "x"] }], "{a=[1, x]}"],
    [[null], ABSENT],
  ]);
});

Deno.test("functions: size", () => {
  check("size", [
    [[[1, 2]], 2],
    [["abc"], 3],
    [[{ a: 1 }], 1],
    [[5], ABSENT],
    [[null], ABSENT],
    [[1, 2, 3], 3],
    [[], ABSENT],
  ]);
});

Deno.test("functions: squashNulls, recursivelySquashNulls, squashDuplicates", () => {
  check("squashNulls", [
    [[[1, null, 2]], [1, 2]],
    [[{ a: null, b: 1 }], { b: 1 }],
    [[1, null, 2], [1, 2]],
    [["x"], "x"],
    [[[]], ABSENT],
  ]);
  check("recursivelySquashNulls", [
    [[{ a: null, b: [1, null, { c: null, d: [null] }] }], { b: [1, { d: [] }] }],
  ]);
  check("squashDuplicates", [
    [[[1, 1, "a", "a", { x: 1 }, { x: 1 }, [2], [2]]], [1, "a", { x: 1 }, [2]]],
    [[{ a: 1 }], { a: 1 }],
  ]);
});

Deno.test("functions: squash functions never change their argument", () => {
  const list = Object.freeze([1, null, 2]);
  check("squashNulls", [[[list], [1, 2]]]);
  assertJson(list, [1, null, 2]);
});

Deno.test("functions: noop, isPresent, notNull, isNull", () => {
  check("noop", [[[], ABSENT], [[1], ABSENT]]);
  check("isPresent", [[[], ABSENT], [[null], null], [[0], 0]]);
  check("notNull", [[[], ABSENT], [[null], ABSENT], [[0], 0]]);
  check("isNull", [[[], ABSENT], [[null], null], [[0], ABSENT]]);
});

Deno.test("functions: firstElement, lastElement, elementAt, toList", () => {
  check("firstElement", [[[[1, 2]], 1], [[[]], ABSENT], [[5], ABSENT], [[[null, 1]], null], [
    [3, 4],
    3,
  ]]);
  check("lastElement", [[[[1, 2]], 2], [[[]], ABSENT]]);
  check("elementAt", [
    [[1, ["a", "b"]], "b"],
    [[5, ["a"]], ABSENT],
    [[-1, ["a"]], ABSENT],
    [[0, "x", "y"], "x"],
    [[[1, "a", "b"]], "b"],
    [[1, "a"], ABSENT],
  ]);
  check("toList", [[[5], [5]], [[[1, 2]], [1, 2]], [[1, 2], [1, 2]], [[null], ABSENT], [
    [[]],
    ABSENT,
  ]]);
});

Deno.test("functions: sort needs mutually comparable elements", () => {
  check("sort", [
    [[["b", "a", "c"]], ["a", "b", "c"]],
    [[[3, 1, 2]], [1, 2, 3]],
    [[[true, false]], [false, true]],
    [[[1, "a"]], ABSENT],
    [[[1, 2.5]], ABSENT], // Integer vs Double: not comparable in Java
    [[[null, 1]], ABSENT],
    [[[{}]], [{}]],
    [[5], 5],
    [["b", "a"], ["a", "b"]],
  ]);
});

Deno.test("functions (extensions): indexOf and the type tests", () => {
  check("indexOf", [[["abc", "c"], 2], [[["a", "b"], "b"], 1], [["abc", "z"], -1], [
    [{}, 1],
    ABSENT,
  ]]);
  check("isString", [[["s"], "s"], [[1], ABSENT]]);
  check("isInteger", [[[1], 1], [[1.5], ABSENT], [[5000000000], ABSENT]]);
  check("isLong", [[[5000000000], 5000000000], [[1], ABSENT]]);
  check("isDouble", [[[1.5], 1.5], [[1], ABSENT]]);
  check("isBoolean", [[[false], false], [["true"], ABSENT]]);
  check("isList", [[[[1]], [1]], [[{}], ABSENT]]);
  check("isMap", [[[{}], {}], [[[]], ABSENT]]);
});

Deno.test("functions in specs: '=fn' uses the current value, lists map element-wise", () => {
  const spec = { names: "=toUpper", csv: "=split(',',@(1,raw))", n: "=size(@(1,csv))" };
  assertJson(run("modify-overwrite-beta", spec, { names: ["a", "b"], raw: "x,y" }), {
    names: ["A", "B"],
    raw: "x,y",
    csv: ["x", "y"],
    n: 2,
  });
});
