/**
 * Runs the `@example` blocks of the product's public faces (`deno test --doc`), as Deno's
 * standard library does: the top-level `mod.ts` and every `mod.ts` of gateway/, cloud/, cli/ and
 * shared/ that has one is type-checked and executed. Part of `deno task check` (it runs alone there, so its type-checking
 * does not compete with the timing-sensitive tests of the parallel test run).
 *
 *   deno run -A tests/support/doc_examples.ts
 */
import { REPO_ROOT } from "./paths.ts";

const PRODUCT = ["gateway", "cloud", "cli", "shared"];

async function* faces(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* faces(path);
    else if (entry.name === "mod.ts") yield path;
  }
}

/** Every `mod.ts` of the product (the top-level one first, then the folders'), sorted. */
export async function publicFaces(root: string = REPO_ROOT): Promise<string[]> {
  const out: string[] = [`${root}/mod.ts`];
  for (const top of PRODUCT) {
    for await (const f of faces(`${root}/${top}`)) out.push(f);
  }
  return out.sort();
}

if (import.meta.main) {
  const withExamples: string[] = [];
  for (const face of await publicFaces()) {
    if ((await Deno.readTextFile(face)).includes("@example")) withExamples.push(face);
  }
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["test", "--doc", "--allow-all", "--unstable-kv", "--unstable-net", ...withExamples],
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (code !== 0) {
    console.error("deno test --doc failed on the examples of the public faces");
    Deno.exit(code);
  }
}
