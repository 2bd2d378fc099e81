import { equal } from "node:assert/strict";
import { decodeLeaf, encodeLeaf, escapeHl7, unescapeHl7 } from "./escape.ts";
import { DEFAULT_DELIMITERS, delimitersOf } from "./delimiters.ts";

const D = DEFAULT_DELIMITERS;

Deno.test("unescapeHl7: delimiter escapes, \\E\\, hex; formatting kept verbatim", () => {
  equal(unescapeHl7("a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f", D), "a|b^c&d~e\\f");
  equal(unescapeHl7("caf\\XC3A9\\", D), "café"); // UTF-8 bytes
  equal(unescapeHl7("caf\\XE9\\", D), "café"); // not UTF-8: ISO 8859-1
  equal(unescapeHl7("line\\.br\\two \\H\\bold\\N\\", D), "line\\.br\\two \\H\\bold\\N\\");
  equal(unescapeHl7("C:\\temp", D), "C:\\temp"); // an unclosed escape stays
  equal(unescapeHl7("\\Xzz\\", D), "\\Xzz\\"); // bad hex stays
  const v27 = delimitersOf("|", "^~\\&#");
  equal(unescapeHl7("Apt \\P\\5", v27), "Apt #5");
  equal(unescapeHl7("Apt \\P\\5", D), "Apt \\P\\5"); // no truncation character before v2.7
});

Deno.test("escapeHl7 and unescapeHl7 are inverse on plain text", () => {
  for (const text of ["", "plain", "a|b^c&d~e\\f", "x\r\ny", "\\.br\\", "#", "\u00e9\u{1F600}"]) {
    equal(unescapeHl7(escapeHl7(text, D), D), text);
    const v27 = delimitersOf("|", "^~\\&#");
    equal(unescapeHl7(escapeHl7(text, v27), v27), text);
  }
  equal(escapeHl7("a|b\\c\rd", D), "a\\F\\b\\E\\c\\X0D\\d");
});

Deno.test("decodeLeaf/encodeLeaf: only the four delimiters decoded; raw text comes back", () => {
  equal(decodeLeaf("O\\T\\Brien", D), "O&Brien");
  equal(decodeLeaf("a\\E\\F\\E\\b", D), "a\\E\\F\\E\\b"); // literal \F\ written with \E\
  equal(decodeLeaf("x\\X7C\\y\\.br\\z", D), "x\\X7C\\y\\.br\\z");
  equal(encodeLeaf("O&Brien|x", D), "O\\T\\Brien\\F\\x");
  equal(encodeLeaf("two\nlines\r", D), "two\\X0A\\lines\\X0D\\");
  for (
    const raw of [
      "O\\T\\Brien",
      "\\F\\\\S\\\\T\\\\R\\",
      "a\\E\\F\\E\\b",
      "x\\X7C\\y\\.br\\z\\H\\",
      "C:\\temp\\F\\",
      "\\",
      "\\\\",
      "a\\Fb\\S\\",
    ]
  ) {
    equal(encodeLeaf(decodeLeaf(raw, D), D), raw, raw);
  }
});
