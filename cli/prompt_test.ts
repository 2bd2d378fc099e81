import assert from "node:assert/strict";
import { confirm, type Prompter, readLine } from "./prompt.ts";

function reader(text: string) {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return {
    read(p: Uint8Array) {
      if (offset >= bytes.byteLength) return Promise.resolve(null);
      p[0] = bytes[offset++];
      return Promise.resolve(1);
    },
  };
}

Deno.test("prompt: lines are read one at a time, CRLF and the last line without newline too", async () => {
  const r = reader("yes\r\nsecond\nlast");
  assert.equal(await readLine(r), "yes");
  assert.equal(await readLine(r), "second");
  assert.equal(await readLine(r), "last");
  assert.equal(await readLine(r), null);
});

Deno.test("prompt: confirm answers y/yes, the default on an empty line, no at end of input", async () => {
  const answers = (list: (string | null)[]): Prompter & { asked: string[] } => {
    const asked: string[] = [];
    return {
      interactive: true,
      asked,
      ask: (q) => (asked.push(q), Promise.resolve(list.shift() ?? null)),
    };
  };
  const p = answers(["y", "YES", "", "", "no", null]);
  assert.equal(await confirm(p, "Go?"), true);
  assert.equal(await confirm(p, "Go?"), true);
  assert.equal(await confirm(p, "Go?"), false);
  assert.equal(await confirm(p, "Go?", true), true);
  assert.equal(await confirm(p, "Go?"), false);
  assert.equal(await confirm(p, "Go?"), false);
  assert.deepEqual(p.asked.slice(2, 4), ["Go? [y/N] ", "Go? [Y/n] "]);
});
