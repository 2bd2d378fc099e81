import assert from "node:assert/strict";
import { scanToml } from "./scan.ts";

Deno.test("scanToml: headers, dotted keys, inline tables and array items get their lines", () => {
  const text = [
    "transforms_path = 'tx' # comment",
    "",
    "[backends.api]",
    'service = "http"',
    'options.base_url = "http://a"',
    'match = { tenant = "a", deep = { x = 1 } }',
    "targets = [",
    '  "t1",',
    '  "t2", # second',
    "]",
    "[[items]]",
    "name = 1",
    '[ "quoted key" . sub ]',
    "k = 2",
  ].join("\n");
  assert.deepEqual(Object.fromEntries(scanToml(text).keys), {
    "transforms_path": 1,
    "backends": 3,
    "backends.api": 3,
    "backends.api.service": 4,
    "backends.api.options": 5,
    "backends.api.options.base_url": 5,
    "backends.api.match": 6,
    "backends.api.match.tenant": 6,
    "backends.api.match.deep": 6,
    "backends.api.match.deep.x": 6,
    "backends.api.targets": 7,
    "backends.api.targets[0]": 8,
    "backends.api.targets[1]": 9,
    "items": 11,
    "items.name": 12,
    "quoted key": 13,
    "quoted key.sub": 13,
    "quoted key.sub.k": 14,
  });
});

Deno.test("scanToml: multi-line strings are skipped as one value and counted in lines", () => {
  const text = [
    'a = """',
    "[not.a.header]",
    'b = "not a key"',
    '"""',
    "c = '''x''''",
    'd = "esc \\" quote"',
    "e = 1",
  ].join("\n");
  const scan = scanToml(text);
  assert.deepEqual(Object.fromEntries(scan.keys), { a: 1, c: 5, d: 6, e: 7 });
  assert.deepEqual(
    scan.strings.map((s) => ({ kind: s.kind, path: s.path, text: text.slice(s.start, s.end) })),
    [
      { kind: "ml_basic", path: "a", text: '\n[not.a.header]\nb = "not a key"\n' },
      { kind: "ml_literal", path: "c", text: "x'" },
      { kind: "basic", path: "d", text: 'esc \\" quote' },
    ],
  );
});

Deno.test("scanToml: string spans exclude keys and include array items", () => {
  const text = '"k" = ["a", { x = \'b\' }]';
  const scan = scanToml(text);
  assert.deepEqual(scan.strings.map((s) => [s.path, text.slice(s.start, s.end)]), [
    ["k[0]", "a"],
    ["k[1].x", "b"],
  ]);
});

Deno.test("scanToml: broken text never throws and keeps what it understood", () => {
  const scan = scanToml('a = "unterminated\nb = 2\n[c\nd = [1,\ne = 5');
  assert.equal(scan.keys.get("b"), 2);
  assert.equal(scan.keys.get("d"), 4);
  assert.equal(scan.keys.get("e"), undefined);
});
