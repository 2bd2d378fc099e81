/** Tests of `deno task jolt SPEC.json < input.json` (run as a subprocess). */

import { strictEqual } from "node:assert";
import { assertJson } from "../../tests/support/jolt.ts";

const CLI = new URL("./cli.ts", import.meta.url).pathname;

async function jolt(args: string[], stdin: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", CLI, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function specFile(json: string): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(path, json);
  return path;
}

Deno.test("cli: prints the transformed JSON with a 2-space indent", async () => {
  const spec = await specFile('[{"operation":"shift","spec":{"a":"b.c"}}]');
  const r = await jolt([spec], '{"a": 1}');
  strictEqual(r.code, 0);
  strictEqual(r.stdout, '{\n  "b": {\n    "c": 1\n  }\n}\n');
  strictEqual(r.stderr, "");
  await Deno.remove(spec);
});

Deno.test("cli: a bad spec is reported on stderr with exit status 1", async () => {
  const spec = await specFile('[{"operation":"shift","spec":{"a":"x.*"}}]');
  const r = await jolt([spec], "{}");
  strictEqual(r.code, 1);
  strictEqual(r.stdout, "");
  assertJson(r.stderr.includes('JOLT spec operation 0 (shift) at ["a"]'), true);
  await Deno.remove(spec);
});

Deno.test("cli: bad input JSON, a missing spec file and missing arguments fail", async () => {
  const spec = await specFile("[]");
  const bad = await jolt([spec], "{nope");
  strictEqual(bad.code, 1);
  assertJson(bad.stderr.includes("invalid input JSON"), true);
  await Deno.remove(spec);
  const missing = await jolt(["/nonexistent/spec.json"], "{}");
  strictEqual(missing.code, 1);
  assertJson(missing.stderr.includes("spec file not found"), true);
  const usage = await jolt([], "{}");
  strictEqual(usage.code, 1);
  assertJson(usage.stderr.includes("usage:"), true);
});
