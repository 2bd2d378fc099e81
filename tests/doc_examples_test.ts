/**
 * The `@example` blocks of the product's public faces run (`deno test --doc`), as Deno's standard
 * library does: every `mod.ts` (and top-level module) of gateway/, cloud/, cli/ and shared/ that
 * has one is type-checked and executed in a child process. Every face carries `@module` docs.
 */
import { assert } from "./assert.ts";
import { REPO_ROOT, runCommand } from "./support/mod.ts";

const PRODUCT = ["gateway", "cloud", "cli", "shared"];

async function* faces(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* faces(path);
    else if (entry.name === "mod.ts") yield path;
  }
}

async function allFaces(): Promise<string[]> {
  const out: string[] = [];
  for (const top of PRODUCT) {
    for await (const f of faces(`${REPO_ROOT}/${top}`)) out.push(f);
  }
  return out.sort();
}

Deno.test("public faces: every mod.ts has @module docs", async () => {
  const missing: string[] = [];
  for (const face of await allFaces()) {
    if (!(await Deno.readTextFile(face)).includes("@module")) {
      missing.push(face.slice(REPO_ROOT.length + 1));
    }
  }
  assert(missing.length === 0, `no @module doc in: ${missing.join(", ")}`);
});

Deno.test("public faces: their @example blocks run (deno test --doc)", async () => {
  const withExamples: string[] = [];
  for (const face of await allFaces()) {
    if ((await Deno.readTextFile(face)).includes("@example")) withExamples.push(face);
  }
  assert(withExamples.length > 0, "no face has an @example");
  const result = await runCommand(Deno.execPath(), [
    "test",
    "--doc",
    "--allow-all",
    "--unstable-kv",
    "--unstable-net",
    ...withExamples,
  ], { cwd: REPO_ROOT, env: { NO_COLOR: "1" } });
  assert(result.code === 0, `deno test --doc failed:\n${result.stdout}\n${result.stderr}`);
});
