/** Tests of the Java-compatibility helpers (number boxes, parsing, toString, split). */

import { strictEqual } from "node:assert";
import {
  countMatches,
  intValue,
  javaSplitLiteral,
  javaSplitRegex,
  javaToString,
  javaTrim,
  longValue,
  numKind,
  parseJavaDouble,
  parseJavaInt,
  parseJavaLong,
  removeEscapeChars,
  removeEscapedValues,
  toKindedNumber,
} from "./java.ts";
import { assertJson } from "../../../tests/support/jolt.ts";

Deno.test("java: numbers are boxed by magnitude and fraction", () => {
  strictEqual(numKind(1), "int");
  strictEqual(numKind(2147483648), "long");
  strictEqual(numKind(1.5), "double");
  assertJson(toKindedNumber("12"), { value: 12, kind: "int" });
  assertJson(toKindedNumber("-3000000000"), { value: -3000000000, kind: "long" });
  assertJson(toKindedNumber("2.0"), { value: 2, kind: "double" });
  strictEqual(toKindedNumber("x"), null);
  strictEqual(toKindedNumber(true), null);
});

Deno.test("java: Integer.parseInt / Long.parseLong / Double.parseDouble", () => {
  strictEqual(parseJavaInt("+7"), 7);
  strictEqual(parseJavaInt("-0"), 0);
  strictEqual(parseJavaInt("2147483648"), null);
  strictEqual(parseJavaInt(" 1"), null);
  strictEqual(parseJavaInt(""), null);
  strictEqual(parseJavaLong("9007199254740993") !== null, true);
  strictEqual(parseJavaDouble(" 1.5e2 "), 150);
  strictEqual(parseJavaDouble(".5"), 0.5);
  strictEqual(parseJavaDouble("1."), 1);
  strictEqual(parseJavaDouble("2d"), 2);
  strictEqual(parseJavaDouble("-Infinity"), -Infinity);
  strictEqual(parseJavaDouble("1e"), null);
  strictEqual(parseJavaDouble("0x10"), null);
});

Deno.test("java: intValue and longValue", () => {
  strictEqual(intValue(3.99), 3);
  strictEqual(intValue(-3.99), -3);
  strictEqual(intValue(1e12 + 0.5), 2147483647);
  strictEqual(intValue(4294967297), 1);
  strictEqual(longValue(2.5), 2);
  strictEqual(longValue(-1e30), -9223372036854775808);
});

Deno.test("java: toString of JSON values", () => {
  strictEqual(javaToString(1), "1");
  strictEqual(javaToString(-0), "0");
  strictEqual(javaToString(0.5), "0.5");
  strictEqual(javaToString(1e-4), "1.0E-4");
  strictEqual(javaToString(12345678.9), "1.23456789E7");
  strictEqual(javaToString(1e21), "1000000000000000000000");
  strictEqual(javaToString(null), "null");
  strictEqual(javaToString([1, "a", [true]]), "[1, a, [true]]");
  strictEqual(javaToString({ a: 1, b: { c: null } }), "{a=1, b={c=null}}");
});

Deno.test("java: String.split, trim, countMatches", () => {
  assertJson(javaSplitLiteral("a|b||", "|"), ["a", "b"]);
  assertJson(javaSplitLiteral("", "|"), [""]);
  assertJson(javaSplitLiteral("|", "|"), []);
  assertJson(javaSplitRegex(",a,b", ","), ["", "a", "b"]);
  assertJson(javaSplitRegex("abc", "(?=b)"), ["a", "bc"]);
  assertJson(javaSplitRegex(",", ","), []);
  strictEqual(javaSplitRegex("a", "("), null);
  strictEqual(javaTrim("\u0000 x \u001f"), "x");
  strictEqual(countMatches("a**b*", "*"), 3);
});

Deno.test("java: JOLT's two escape removers", () => {
  strictEqual(removeEscapedValues("\\@pants"), "pants");
  strictEqual(removeEscapedValues("rating-\\&pants"), "rating-pants");
  strictEqual(removeEscapeChars("\\@pants"), "@pants");
  strictEqual(removeEscapeChars("rating\\\\pants"), "rating\\pants");
});
