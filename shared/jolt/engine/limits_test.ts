/**
 * The work budget of one run (limits.ts): issue 33's polynomial many-star preview finishes at
 * once, work past the budget stops with JoltBudgetExceeded on the walker and on the fast path,
 * every operation charges it, and a compile has a budget of its own.
 */

import {
  compile,
  JoltBudgetExceeded,
  JoltSpecError,
  JoltTransformError,
  MAX_RUN_STEPS,
  RUN_STEPS_RANGE,
} from "../mod.ts";
import { transformFields } from "../../gateway_config/components/middleware_fields.ts";
import { stepsSpent } from "./mod.ts";
import {
  assertJson,
  assertThrows,
  fastShiftOf,
  keyProductAttack,
  manyStarAttack,
} from "../../../tests/support/jolt.ts";

const bytesOf = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const shiftSpec = (chain: unknown[]) => (chain[0] as { spec: unknown }).spec;

Deno.test("budget: issue 33's 100 keys of 200 stars against 20,000-character keys finish at once", () => {
  const { spec, input } = manyStarAttack();
  const chain = compile(spec);
  assertJson(chain.apply(input), null); // no key has the `c` every spec key needs
  // 35 s with the table of groups and positions; now each key is read once per try. Counted,
  // not timed: the run's work steps stay far below its budget.
  assertJson(stepsSpent() < 1_000_000, true, `${stepsSpent()} steps`);
  // Keys with two or more stars take the walker: the fast path declines the spec.
  assertJson(chain.applyJson(bytesOf(input)), null);
  assertJson(fastShiftOf(shiftSpec(spec)), null);
  // The same keys where the `c` is present match, with the reluctant captures.
  const key = "0" + "a".repeat(150) + "c" + "a".repeat(19_847) + "b";
  const out = chain.apply({ [key]: 1 }) as { out: Record<string, number> };
  assertJson(Object.keys(out.out), [key]);
});

Deno.test("budget: a product of keys and patterns stops with JoltBudgetExceeded on the walker and the fast path", () => {
  // 100 one-star keys by 120,000 keys: the same 12,000,000 tries as 1,000 by 12,000, but the fast
  // path's program for 1,000 wildcard keys took V8 1.5 s of CPU and 2.8 GB to compile and run
  // three times (most of this file's CPU), for 100 keys 0.2 s and 140 MB.
  const { spec, input } = keyProductAttack(100, 120_000);
  const chain = compile(spec);
  for (let run = 0; run < 2; run++) {
    const walker = assertThrows(() => chain.apply(input), JoltBudgetExceeded, /work steps/);
    assertJson(
      [walker.code, walker.operation, walker.operationIndex, walker.limit],
      ["transform_budget_exceeded", "shift", 0, MAX_RUN_STEPS],
    );
    assertJson(walker instanceof JoltTransformError, true);
    const fast = assertThrows(() => chain.applyJson(bytesOf(input)), JoltBudgetExceeded);
    assertJson([fast.code, fast.operation, fast.message], [walker.code, "shift", walker.message]);
  }
  // The fast path itself (not only the seam) stops on the budget. Compiled afresh, so once is
  // enough: a second time would repeat the same run.
  assertThrows(() => fastShiftOf(shiftSpec(spec))!.run(bytesOf(input)), Error, /work steps/);
  // Each run starts with the whole budget: a tenth of the keys is fine on both paths.
  const small = Object.fromEntries(Object.entries(input).slice(0, 12_000));
  assertJson(chain.apply(small), null);
  const walkerSteps = stepsSpent();
  assertJson(new TextDecoder().decode(chain.applyJson(bytesOf(small))!), "null");
  assertJson([stepsSpent(), walkerSteps], [1_200_000, 1_200_000]);
});

Deno.test("budget: a key with a line terminator takes the table, which is charged before it is built", () => {
  // A terminator may not sit in a group, so a literal holding one must cover it: table only.
  const keys: Record<string, string> = {};
  for (let i = 0; i < 100; i++) keys["*\n".repeat(199) + "*b" + i] = "out.&";
  // Each table here (200 groups by 210,002 positions, literals of 2: 10.5M steps) is over the
  // budget by itself, so the run stops at the first table's charge, none built. With keys of
  // 20,000 characters (1M steps a table) nine tables were built first: 2 s of CPU.
  const input: Record<string, number> = {};
  for (let j = 0; j < 10; j++) input["a\n".repeat(105_000) + "b" + j] = j;
  const chain = compile([{ operation: "shift", spec: keys }]);
  const err = assertThrows(() => chain.apply(input), JoltBudgetExceeded, /work steps/);
  assertJson(err.operation, "shift");
  // A small one still matches through the table, as the reluctant regex does.
  const one = compile([{ operation: "shift", spec: { "*\n*-*": "&(0,1).&(0,2).&(0,3)" } }]);
  assertJson(one.apply({ "a\nb-c-d": 1 }), { a: { b: { "c-d": 1 } } });
});

Deno.test("budget: every operation charges the run's steps", () => {
  const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
  const patterns = (rhs: unknown) =>
    Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`x${i}*`, rhs]));
  // Products over the budget: 6,000 patterns against 2,000 keys (the same 10M steps are spent
  // before the stop as with 20,000 keys, at a third of the CPU: smaller maps are cheaper to
  // list), 5,000 distinct elements each compared with those kept before.
  const over: [string, unknown, unknown][] = [
    ["remove", patterns(""), wide(2_000)],
    ["cardinality", patterns("ONE"), wide(2_000)],
    ["modify-overwrite-beta", { list: "=squashDuplicates" }, {
      list: Array.from({ length: 5_000 }, (_, i) => i),
    }],
  ];
  for (const [operation, spec, input] of over) {
    const err = assertThrows(
      () => compile([{ operation: "sort" }, { operation, spec }]).apply(input),
      JoltBudgetExceeded,
      /work steps/,
    );
    assertJson([err.operationIndex, err.operation], [1, operation]);
  }
  // Linear walks charge at least a step per key they visit.
  const input = { rows: wide(5_000) };
  const linear: [string, unknown][] = [
    ["sort", undefined],
    ["default", { rows: { "*": 0 } }],
    ["cardinality", { rows: { "*": "MANY" } }],
    ["modify-default-beta", { rows: { "*": "=toString" } }],
    ["shift", { rows: { "*": "&" } }],
  ];
  for (const [operation, spec] of linear) {
    compile([spec === undefined ? { operation } : { operation, spec }]).apply(input);
    assertJson(stepsSpent() >= 5_000, true, `${operation}: ${stepsSpent()} steps`);
  }
});

Deno.test("budget: compiling matches every pattern against its literal siblings within a budget of its own", () => {
  const spec: Record<string, string> = {};
  for (let i = 0; i < 5_000; i++) {
    spec[`k${i}`] = "a";
    spec[`*k${i}`] = "b";
  }
  const err = assertThrows(
    () => compile([{ operation: "shift", spec }]),
    JoltSpecError,
    /compiling the spec needs more than 10000000 work steps/,
  );
  assertJson(err.code, "spec_too_large");
  // 1,000 of each is a million tries: fine.
  const fine = Object.fromEntries(Object.entries(spec).slice(0, 2_000));
  assertJson(compile([{ operation: "shift", spec: fine }]).apply({ k1: 1 }), { a: 1 });
});

Deno.test("budget: a spec compiled with maxSteps stops there on the walker and the fast path", () => {
  const { spec, input } = keyProductAttack(10, 2_000); // 20,000 tries
  const chain = compile(spec, { maxSteps: 10_000 });
  const walker = assertThrows(() => chain.apply(input), JoltBudgetExceeded, /10000 work steps/);
  assertJson((walker as JoltBudgetExceeded).limit, 10_000);
  const fast = assertThrows(
    () => chain.applyJson(bytesOf(input)),
    JoltBudgetExceeded,
    /10000 work steps/,
  );
  assertJson((fast as JoltBudgetExceeded).limit, 10_000);
  // The default budget has room for it.
  assertJson(compile(spec).apply(input), null);
  for (const bad of [RUN_STEPS_RANGE.min - 1, RUN_STEPS_RANGE.max + 1, 1.5]) {
    assertThrows(() => compile(spec, { maxSteps: bad }), RangeError, /maxSteps must be an integer/);
  }
});

Deno.test("budget: the transform middlewares' max_steps option has the engine's default and range", () => {
  for (const kind of ["data", "metadata"] as const) {
    const field = transformFields(kind).max_steps;
    assertJson(field.default, MAX_RUN_STEPS);
    assertJson(field.schema.safeParse(RUN_STEPS_RANGE.min).success, true);
    assertJson(field.schema.safeParse(RUN_STEPS_RANGE.max).success, true);
    assertJson(field.schema.safeParse(RUN_STEPS_RANGE.min - 1).success, false);
    assertJson(field.schema.safeParse(RUN_STEPS_RANGE.max + 1).success, false);
  }
});

Deno.test("output budget: a value copied to many places, or a string doubled, stops at 8 characters a step", () => {
  // 1,000 characters copied into each of 200 items: 200,000 characters of output against the
  // 80,000 of a 10,000-step budget. (A 5 MB value into 200,000 items took 24 GB before.)
  const copy = compile([{
    operation: "shift",
    spec: { items: { "*": { "@(2,patient)": "out[&1].patient" } } },
  }], { maxSteps: 10_000 });
  const input = { patient: "p".repeat(1_000), items: Array.from({ length: 200 }, () => ({})) };
  const over = /output would be more than 80000 characters \(8 per work step/;
  // A budget of the run, as its steps are: JoltBudgetExceeded (422 on a request), naming it.
  const walker = assertThrows(() => copy.apply(input), JoltBudgetExceeded, over);
  assertJson(walker.limit, 10_000);
  assertThrows(() => copy.applyJson(bytesOf(input)), JoltBudgetExceeded, over);
  // A tenth of the items fits, on both paths.
  const fewer = { ...input, items: input.items.slice(0, 20) };
  const out = copy.apply(fewer) as { out: { patient: string }[] };
  assertJson(out.out.length, 20);
  assertJson(new TextDecoder().decode(copy.applyJson(bytesOf(fewer))!), JSON.stringify(out));
  // concat of a value with itself, operation after operation: stopped while it doubles.
  const doubling = compile(
    Array.from({ length: 40 }, () => ({
      operation: "modify-overwrite-beta",
      spec: { a: "=concat(@(1,a),@(1,a))" },
    })),
    { maxSteps: 10_000 },
  );
  assertThrows(() => doubling.apply({ a: "x".repeat(1_000) }), JoltBudgetExceeded, over);
});

Deno.test("output budget: the pieces of split count among the values a run makes", () => {
  // An empty separator splits a string into its characters: 10 MB took 2.3 s and 480 MB.
  const chain = compile([{ operation: "modify-overwrite-beta", spec: { v: "=split('',@(1,s))" } }]);
  assertJson((chain.apply({ s: "abc" }) as { v: string[] }).v, ["a", "b", "c"]);
  assertThrows(
    () => chain.apply({ s: "a".repeat(1_000_010) }),
    JoltTransformError,
    /more than 1000000 values \(nulls padding arrays, copied spec values, pieces of split strings\)/,
  );
});

Deno.test("output budget: a deep output (a body with a raised max_json_depth) is measured without overflowing", () => {
  let deep: unknown = "x";
  for (let i = 0; i < 50_000; i++) deep = [deep];
  const chain = compile([{ operation: "shift", spec: { "@": "out" } }]);
  const out = chain.apply({ a: deep }) as { out: { a: unknown } };
  assertJson(out.out.a === deep, true);
});
