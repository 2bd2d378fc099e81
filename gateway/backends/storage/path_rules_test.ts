import { assertEquals } from "../../../tests/assert.ts";
import { decodePath, encodePath, pathProblem } from "./path_rules.ts";

Deno.test("pathProblem: accepts relative paths of ordinary segments", () => {
  for (const ok of ["a", "a/b/c.json", "p-1/2025-01-31T09:15:02.123Z.json", "ü/日本.txt", "a b"]) {
    assertEquals(pathProblem(ok), null, ok);
  }
});

Deno.test("pathProblem: refuses every way out of the root and the hidden namespace", () => {
  const cases: [string, RegExp][] = [
    ["", /empty/],
    ["/etc/passwd", /absolute/],
    ["..", /`\.\.` segment/],
    ["a/../../b", /`\.\.` segment/],
    [".", /`\.` segment/],
    ["a/./b", /`\.` segment/],
    ["a//b", /empty segment/],
    ["a/", /empty segment/],
    ["a\\b", /backslash/],
    ["a\0b", /NUL/],
    ["a\nb", /control/],
    ["a\x1bb", /control/],
    ["a\x7fb", /control/],
    [".hidden", /starting with `\.`/],
    ["a/.b.meta.json", /starting with `\.`/],
    ["x".repeat(201), /longer than 200 bytes/],
    [("a/").repeat(460) + "a", /longer than 900 bytes/],
  ];
  for (const [path, why] of cases) {
    const problem = pathProblem(path);
    if (problem === null || !why.test(problem)) {
      throw new Error(`${JSON.stringify(path)}: ${problem} does not match ${why}`);
    }
  }
});

Deno.test("pathProblem: a fragment may start a segment with a dot, never be `..`", () => {
  assertEquals(pathProblem(".json", true), null);
  assertEquals(pathProblem("..", true), "has a `..` segment");
  assertEquals(pathProblem("a/../b", true), "has a `..` segment");
});

Deno.test("encodePath keeps pchar readable and round-trips through decodePath", () => {
  const path = "p 1/2025-01-31T09:15:02.123Z/a&b=c;d@e+f,g$h/%/?#/ü";
  const encoded = encodePath(path);
  assertEquals(encoded, "p%201/2025-01-31T09:15:02.123Z/a&b=c;d@e+f,g$h/%25/%3F%23/%C3%BC");
  assertEquals(decodePath(encoded), path);
});
