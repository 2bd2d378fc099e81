/** Tests of the path syntax: key parsing, dot-notation parsing, references and star patterns. */

import { strictEqual } from "node:assert";
import { SpecIssue } from "./errors.ts";
import {
  AmpElement,
  ArrayElement,
  AtElement,
  DollarElement,
  HashElement,
  LiteralElement,
  StarElement,
  TransposeElement,
} from "./path_elements.ts";
import { DotPath, parseKey, splitOr } from "./paths.ts";
import { parseGroupRef } from "./references.ts";
import { StarDouble, StarMany, StarSingle } from "./star.ts";
import { assertJson, assertThrows } from "../../../tests/support/jolt.ts";
import { Matched, WalkedPath } from "./walked_path.ts";

Deno.test("paths: RHS dot notation canonical forms (JOLT's validRHS cases)", () => {
  const cases: [string, string][] = [
    ["@a", "@(0,a)"],
    ["@abc", "@(0,abc)"],
    ["@a.b.c", "@(0,a).b.c"],
    ["@(a.b\\.c)", "@(0,a.b\\.c)"],
    ["@a.b.@c", "@(0,a).b.@(0,c)"],
    ["@(a[2].&).b.@c", "@(0,a.[2].&(0,0)).b.@(0,c)"],
    ["a[&2].@b[1].c", "a.[&(2,0)].@(0,b).[1].c"],
    ["test.@(2,foo\\.bar)", "test.@(2,foo\\.bar)"],
    ["x[#3].y[]", "x.[#3].y.[]"],
    ["photo-&(1,1)-url", "photo-&(1,1)-url"],
  ];
  for (const [text, canonical] of cases) {
    strictEqual(DotPath.parse(text, false).canonical, canonical);
  }
});

Deno.test("paths: bad RHS dot notation (JOLT's badRHS cases)", () => {
  for (const text of ["@", "a@", "@a@b", "@(a.b.&(2,2)", "@(a.b.&(2,2).d", "@(a.b.@c).d"]) {
    assertThrows(() => DotPath.parse(text, false), SpecIssue);
  }
  assertThrows(() => DotPath.parse("@(a.*.c)", false), SpecIssue, /'\*'/);
  assertThrows(() => DotPath.parse("@(a.$2.c)", false), SpecIssue, /'\$'/);
});

Deno.test("paths: reference sugar expands to &(up,group)", () => {
  assertJson(parseGroupRef("&", "&"), { up: 0, group: 0 });
  assertJson(parseGroupRef("&3", "&"), { up: 3, group: 0 });
  assertJson(parseGroupRef("&(3)", "&"), { up: 3, group: 0 });
  assertJson(parseGroupRef("&(3,2)", "&"), { up: 3, group: 2 });
  assertJson(parseGroupRef("$(1,1)", "$"), { up: 1, group: 1 });
  for (const bad of ["&(1,2,3)", "&(-1)", "&a", "&()"]) {
    assertThrows(() => parseGroupRef(bad, "&"), SpecIssue);
  }
});

Deno.test("paths: key kinds, in JOLT's order of inspection", () => {
  const kinds: [string, unknown][] = [
    ["plain", LiteralElement],
    ["@", AtElement],
    ["*", StarElement],
    ["a-*", StarElement],
    ["[2]", ArrayElement],
    ["@x", TransposeElement],
    ["@(1,x)", TransposeElement],
    ["$", DollarElement],
    ["$(1,2)", DollarElement],
    ["x-&1", AmpElement],
    ["#lit", HashElement],
    ["\\@x", LiteralElement],
    ["\\$", LiteralElement],
    ["\\*", LiteralElement],
    ["\\#x", LiteralElement],
    ["a\\&b", LiteralElement],
  ];
  for (const [key, cls] of kinds) {
    strictEqual(parseKey(key) instanceof (cls as typeof LiteralElement), true, key);
  }
  strictEqual((parseKey("\\@x") as LiteralElement).key, "@x");
  strictEqual((parseKey("a.b") as LiteralElement).canonical, "a\\.b");
});

Deno.test("paths: '|' splits like Java's String.split", () => {
  assertJson(splitOr("a|b"), ["a", "b"]);
  assertJson(splitOr("a||b"), ["a", "", "b"]);
  assertJson(splitOr("a|"), ["a"]);
  assertJson(splitOr("plain"), ["plain"]);
});

Deno.test("paths: one-star, two-star and many-star patterns", () => {
  const wp = new WalkedPath();
  wp.push(null, new Matched("root"));
  const one = new StarSingle("tag-*");
  assertJson(one.match("tag-Pro")?.groups, ["Pro"]);
  strictEqual(one.match("tag-"), null);
  const two = new StarDouble("tag-*-*");
  assertJson(two.match("tag-Foo-Bar")?.groups, ["Foo", "Bar"]);
  assertJson(two.match("tag-a-b-c")?.groups, ["a", "b-c"]);
  strictEqual(two.stringMatch("tag-ab"), false);
  const many = new StarMany("*-*-*");
  assertJson(many.match("a-b-c-d")?.groups, ["a", "b", "c-d"]);
  strictEqual(many.match("a-b-"), null);
  // Java's '.' does not match a newline.
  strictEqual(new StarMany("*_*_*").match("a\nb_c_d"), null);
});

Deno.test("paths: array keys", () => {
  const explicit = parseKey("[3]") as ArrayElement;
  strictEqual(explicit.type, "explicit");
  strictEqual(explicit.index, 3);
  strictEqual((parseKey("[]") as ArrayElement).type, "append");
  strictEqual((parseKey("[&1]") as ArrayElement).type, "ref");
  strictEqual((parseKey("[#2]") as ArrayElement).type, "hash");
  strictEqual((parseKey("[@(1,i)]") as ArrayElement).type, "transpose");
  assertThrows(() => parseKey("[-1]"), SpecIssue);
  assertThrows(() => parseKey("[x]"), SpecIssue);
  assertThrows(() => parseKey("[1][2]"), SpecIssue);
});

/** The reference: Java's `^lit(.+?)lit(.+?)…$`, where `.` excludes line terminators. */
function referenceMatch(pattern: string, key: string): string[] | null {
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(
    "^" + pattern.split("*").map(esc).join("([^\\n\\r\\u0085\\u2028\\u2029]+?)") + "$",
  );
  const m = re.exec(key);
  return m ? m.slice(1) : null;
}

Deno.test("StarMany: the same captures as the reluctant regex on every small key", () => {
  const alphabet = ["a", "b", "-", "\n"];
  // The ones with a line terminator in a literal take the table; the others the greedy pass.
  const patterns = [
    "*-*-*",
    "a*a*a*",
    "*a*b*",
    "**-*",
    "*-*-*-*",
    "a*-*b*-",
    "*\n*-*",
    "a*\n-*\n*",
    "*-\n*a*",
  ];
  let compared = 0;
  const keys: string[] = [""];
  for (let len = 1; len <= 7; len++) {
    const prev = keys.filter((k) => k.length === len - 1);
    for (const k of prev) for (const c of alphabet) keys.push(k + c);
  }
  for (const pattern of patterns) {
    const star = new StarMany(pattern);
    for (const key of keys) {
      const expected = referenceMatch(pattern, key);
      const got = star.match(key);
      strictEqual(
        JSON.stringify(got?.groups ?? null),
        JSON.stringify(expected),
        `${pattern} ${JSON.stringify(key)}`,
      );
      strictEqual(star.stringMatch(key), expected !== null);
      compared++;
    }
  }
  strictEqual(compared > 20_000, true);
});

Deno.test("StarMany: 30 stars against a long key that almost matches finishes at once (no backtracking blow-up)", () => {
  // Exponential for a backtracking matcher: every split of the a's is tried before failing.
  const pattern = "*a".repeat(30) + "*b";
  const star = new StarMany(pattern);
  const started = performance.now();
  strictEqual(star.stringMatch("a".repeat(2_000)), false);
  strictEqual(star.match("a".repeat(2_000) + "xb") !== null, true);
  // A generous bound: the old matcher did not finish in minutes; this one takes milliseconds.
  strictEqual(performance.now() - started < 2_000, true);
});
