/**
 * Conformance with Bazaarvoice JOLT: input / spec / expected output triples ported from the
 * JOLT project's own test fixtures (jolt-core/src/test/resources/json, Apache-2.0), run against
 * deep-frozen inputs. One deliberate change: testListOfFunction no longer lists the unknown
 * function "=nonnull" (JOLT skips unknown names; we reject them when compiling).
 */

import { JoltSpecError } from "./mod.ts";
import { assertJson, assertOrdered, assertThrows, run } from "../../tests/support/jolt.ts";
import { compile } from "./mod.ts";
import { frozen } from "../../tests/support/jolt.ts";
import shiftCases from "./testdata/jolt_shift.json" with { type: "json" };
import defaultCases from "./testdata/jolt_default.json" with { type: "json" };
import removeCases from "./testdata/jolt_remove.json" with { type: "json" };
import cardinalityCases from "./testdata/jolt_cardinality.json" with { type: "json" };
import modifyCases from "./testdata/jolt_modify.json" with { type: "json" };
import invalidModifySpecs from "./testdata/jolt_modify_invalid.json" with { type: "json" };
import sortCases from "./testdata/jolt_sort.json" with { type: "json" };
import chainCases from "./testdata/jolt_chain.json" with { type: "json" };

interface Case {
  name: string;
  spec: unknown;
  input?: unknown;
  expected?: unknown;
  specError?: boolean;
}

function suite(operation: string, cases: Case[]): void {
  for (const c of cases) {
    Deno.test(`JOLT ${operation} fixture: ${c.name}`, () => {
      if (c.specError) {
        assertThrows(() => compile([{ operation, spec: c.spec }]), JoltSpecError);
      } else {
        assertJson(run(operation, c.spec, c.input), c.expected);
      }
    });
  }
}

suite("shift", shiftCases as Case[]);
suite("default", defaultCases as Case[]);
suite("remove", removeCases as Case[]);
suite("cardinality", cardinalityCases as Case[]);

const MODES = {
  OVERWRITR: "modify-overwrite-beta",
  DEFAULTR: "modify-default-beta",
  DEFINR: "modify-define-beta",
} as const;

for (const c of modifyCases as (Case & Record<string, unknown>)[]) {
  for (const [mode, operation] of Object.entries(MODES)) {
    if (!(mode in c)) continue;
    Deno.test(`JOLT ${operation} fixture: ${c.name}`, () => {
      const context = (c.context ?? undefined) as Record<string, unknown> | undefined;
      assertJson(run(operation, c.spec, c.input, context), c[mode]);
    });
  }
}

Deno.test("JOLT modify fixture: invalid specs are rejected by every flavour", () => {
  for (const spec of invalidModifySpecs as unknown[]) {
    for (const operation of Object.values(MODES)) {
      assertThrows(() => compile([{ operation, spec }]), JoltSpecError);
    }
  }
});

Deno.test("JOLT sort fixture: simple (values and key order)", () => {
  for (const c of sortCases as Case[]) assertOrdered(run("sort", undefined, c.input), c.expected);
});

for (const c of chainCases as Case[]) {
  Deno.test(`JOLT chain fixture: ${c.name}`, () => {
    assertJson(compile(c.spec).apply(frozen(c.input)), c.expected);
  });
}
