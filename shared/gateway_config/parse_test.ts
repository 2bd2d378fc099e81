import assert from "node:assert/strict";
import { parseConfigText } from "./parse.ts";

Deno.test("parseConfigText: raw document and the position of every key", () => {
  const parsed = parseConfigText(
    '[backends.api]\nservice = "http"\n\n[backends.api.options]\nbase_url = "http://a"\n',
    "gw.toml",
  );
  assert.deepEqual(parsed.problems, []);
  // smol-toml builds prototype-less tables; compare their content.
  assert.deepEqual(structuredClone(parsed.raw), {
    backends: { api: { service: "http", options: { base_url: "http://a" } } },
  });
  assert.deepEqual(Object.fromEntries(parsed.positions), {
    "backends": { file: "gw.toml", line: 1 },
    "backends.api": { file: "gw.toml", line: 1 },
    "backends.api.service": { file: "gw.toml", line: 2 },
    "backends.api.options": { file: "gw.toml", line: 4 },
    "backends.api.options.base_url": { file: "gw.toml", line: 5 },
  });
});

Deno.test("parseConfigText: a syntax error is one problem with line and column", () => {
  const parsed = parseConfigText('a = 1\n[b]\nc = "x"\nd = [1, \n', "bad.toml");
  assert.equal(parsed.raw, undefined);
  assert.equal(parsed.problems.length, 1);
  assert.ok((parsed.problems[0].line ?? 0) >= 4, JSON.stringify(parsed.problems));
  assert.match(parsed.problems[0].message, /^TOML syntax error at column \d+: /);
});

Deno.test("parseConfigText: a key defined twice is a problem naming both lines; the rest is read", () => {
  const parsed = parseConfigText('a = 1\n[b]\nc = "x"\nc = "y"\n', "dup.toml");
  assert.deepEqual(parsed.problems, [{
    file: "dup.toml",
    line: 4,
    path: "b.c",
    message: "`b.c` is defined twice: on line 3 and on line 4; keep one",
  }]);
  assert.deepEqual({ ...parsed.raw, b: { ...(parsed.raw!.b as object) } }, { a: 1, b: { c: "x" } });
});
