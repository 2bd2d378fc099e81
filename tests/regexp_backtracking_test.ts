/**
 * A spec's regular expression (JOLT `split`'s separator) runs in linear time: every command that
 * runs transforms passes V8 `--enable-experimental-regexp-engine` (separators compile with the
 * linear engine's `l` flag, shared/jolt/engine/separator.ts) and
 * `--enable-experimental-regexp-engine-on-excessive-backtracks` (any other regular expression
 * that backtracks too much finishes there) (docs/transforms.md). Without them, the separator
 * below takes hours on a 38-character value in V8's default engine.
 */
import { assert, assertEquals } from "./assert.ts";
import { REPO_ROOT } from "./support/mod.ts";
import { PROGRAMS } from "../deploy/release/compile.ts";

const FLAGS = [
  "--enable-experimental-regexp-engine",
  "--enable-experimental-regexp-engine-on-excessive-backtracks",
];

/** True when `flags` holds every one of FLAGS. */
const linear = (flags: string[]) => FLAGS.every((f) => flags.includes(f));

/** The `--v8-flags=` value of a command's words (empty when there is none). */
function v8Flags(words: string[]): string[] {
  const flag = words.find((w) => w.startsWith("--v8-flags="));
  return flag ? flag.slice("--v8-flags=".length).split(",") : [];
}

Deno.test("regexp backtracking: every command that runs transforms falls back to V8's linear engine", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`)).tasks as Record<
    string,
    string
  >;
  for (const name of ["start", "test", "cloud", "jolt"]) {
    assert(linear(v8Flags(tasks[name].split(/\s+/))), `deno task ${name}: ${tasks[name]}`);
  }
  for (const name of ["gateway", "cloud"]) {
    assert(linear(v8Flags(PROGRAMS[name].flags)), `compiled ${name}`);
  }
  // The image's two entry points and the systemd unit.
  const dockerfile = await Deno.readTextFile(`${REPO_ROOT}/Dockerfile`);
  const entries = dockerfile.split("\n").filter((l) => l.startsWith("ENTRYPOINT "));
  assertEquals(entries.length, 2);
  for (const e of entries) assert(linear(v8Flags(JSON.parse(e.slice(11)))), e);
  const unit = await Deno.readTextFile(`${REPO_ROOT}/deploy/systemd/healthcare-gateway.service`);
  const exec = unit.split("\n").find((l) => l.startsWith("ExecStart="))!;
  assert(linear(v8Flags(exec.split(" "))), exec);
});

Deno.test("regexp backtracking: a split separator like (a+)+$ finishes under the start task's V8 flags", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`)).tasks;
  const flags = v8Flags(tasks.start.split(/\s+/));
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    const jolt = new URL("../shared/jolt/mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { compile } from ${JSON.stringify(jolt)};
const spec = compile([{ operation: "modify-overwrite-beta", spec: { v: "=split('(a+)+$',@(1,s))" } }]);
console.log(JSON.stringify(spec.apply({ s: "x" + "a".repeat(36) + "y" })));`,
    );
    // The guard only ends a hang: with the flag the run takes as long as starting Deno does.
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-check",
        "--node-modules-dir=manual",
        `--v8-flags=${flags.join(",")}`,
        script,
      ],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000),
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    const result = JSON.parse(new TextDecoder().decode(out.stdout));
    // No match: the value is the one part (Java's String.split).
    assertEquals(result.v, ["x" + "a".repeat(36) + "y"]);
  } finally {
    await Deno.remove(script);
  }
});
