import assert from "node:assert/strict";
import { formatProblem, formatProblems } from "./format.ts";

Deno.test("formatProblems: file:line: path: message, one per line", () => {
  assert.equal(
    formatProblems([
      { file: "gw.toml", line: 3, path: "backends.api.port", message: "expected integer" },
      { file: "gw.toml", path: "logging", message: "no line known" },
      { file: "gw.toml", line: 1, path: "", message: "TOML syntax error" },
    ]),
    [
      "gw.toml:3: backends.api.port: expected integer",
      "gw.toml: logging: no line known",
      "gw.toml:1: TOML syntax error",
    ].join("\n"),
  );
  assert.equal(formatProblems([]), "");
  assert.equal(formatProblem({ file: "a", line: 2, path: "x", message: "m" }), "a:2: x: m");
});
