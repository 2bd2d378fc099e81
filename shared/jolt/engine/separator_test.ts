/**
 * `split` separators run in linear time or are refused: in the spec a spec error, from the data no
 * value. The test task runs V8 with `--enable-experimental-regexp-engine` (the `l` flag).
 */
import { assert, assertEquals, assertMatch, assertThrows } from "../../../tests/assert.ts";
import { compile, JoltSpecError } from "../mod.ts";
import {
  ATTEMPT_WORK,
  compileSeparator,
  LINEAR_ENGINE,
  SEPARATOR_MAX_LENGTH,
} from "./separator.ts";

/** The flags of the compiled separator, or the reason it was refused. */
function outcome(pattern: string): string {
  const c = compileSeparator(pattern);
  return "re" in c ? c.re.flags : c.refused;
}

Deno.test("separator: the test task's V8 has the linear engine's `l` flag", () => {
  assert(LINEAR_ENGINE, "deno task test passes --v8-flags=--enable-experimental-regexp-engine");
});

Deno.test("separator: what the linear engine runs compiles with `l`, however it nests", () => {
  for (const p of ["\\s*,\\s*", "(a+)+$", "[,;]", "\\|", "(?:\\r\\n|\\n)+", "\\b\\W+\\b"]) {
    assertEquals(outcome(p), "gl", p);
  }
});

Deno.test("separator: a lookahead or backreference runs only with a small bound per attempt", () => {
  // Accepted: no unbounded repetition, few ways to try (the shipped HL7 date split included).
  for (
    const p of [
      "(?<=^[0-9]{4})|(?<=^[0-9]{6})",
      "(?=[A-Z])",
      "(?<=\\d)(?=\\D)",
      "(a)\\1",
      "a?a?a?(?=x)",
      "(?!a)",
    ]
  ) {
    assertEquals(outcome(p), "g", p);
  }
  // Refused: an attempt's work grows with the value, or has too many ways.
  const refused = [
    "(a+)+(?=b)",
    ',(?=(?:[^"]*"[^"]*")*[^"]*$)',
    "(\\w+)\\s\\1",
    "(a|a)".repeat(12) + "(?=b)",
    `a{${ATTEMPT_WORK + 1}}(?=b)`,
  ];
  for (const p of refused) assertMatch(outcome(p), /needs backtracking whose time grows/, p);
});

Deno.test("separator: invalid or over-long patterns are refused with the reason", () => {
  assertMatch(outcome("("), /^Invalid regular expression: .*Unterminated group/);
  assertMatch(outcome("a".repeat(SEPARATOR_MAX_LENGTH + 1)), /longer than 1024 characters/);
});

Deno.test("separator: in a spec, a refused separator is a spec error naming it", () => {
  const err = assertThrows(
    () =>
      compile([{
        operation: "modify-overwrite-beta",
        spec: { v: "=split('(a+)+(?=b)',@(1,s))" },
      }]),
  );
  assert(err instanceof JoltSpecError);
  assertMatch(err.message, /split separator '\(a\+\)\+\(\?=b\)': the separator needs backtracking/);
  // An invalid one too (JOLT would yield no value at run time).
  const invalid = assertThrows(
    () => compile([{ operation: "modify-overwrite-beta", spec: { v: "=split('(',@(1,s))" } }]),
  );
  assert(invalid instanceof JoltSpecError);
  assertMatch(invalid.message, /split separator '\(': Invalid regular expression/);
});

Deno.test("separator: from the data, a refused separator yields no value; a linear one splits", () => {
  const spec = compile([{
    operation: "modify-overwrite-beta",
    spec: { v: "=split(@(1,sep),@(1,s))" },
  }]);
  // 30,000 `a`s: backtracking this separator would take longer than the universe has left.
  const s = "a".repeat(30_000);
  assertEquals(spec.apply({ sep: "(a+)+(?=b)", s }), { sep: "(a+)+(?=b)", s });
  assertEquals(spec.apply({ sep: "(a+)+$", s: s + "b" }), {
    sep: "(a+)+$",
    s: s + "b",
    v: [s + "b"],
  });
  assertEquals(spec.apply({ sep: "(?=[A-Z])", s: "aBcD" }), {
    sep: "(?=[A-Z])",
    s: "aBcD",
    v: ["a", "Bc", "D"],
  });
});
