/**
 * Every public face (`mod.ts`) of the product opens with `@module` docs and a runnable `@example`;
 * the examples are run by `deno task check` (tests/support/doc_examples.ts, `deno test --doc`).
 */
import { assert } from "./assert.ts";
import { publicFaces } from "./support/doc_examples.ts";
import { REPO_ROOT } from "./support/mod.ts";

Deno.test("public faces: every mod.ts has @module docs and a runnable @example", async () => {
  const problems: string[] = [];
  for (const face of await publicFaces()) {
    const text = await Deno.readTextFile(face);
    const name = face.slice(REPO_ROOT.length + 1);
    if (!text.includes("@module")) problems.push(`${name}: no @module`);
    if (!text.includes("@example")) problems.push(`${name}: no @example`);
  }
  assert(problems.length === 0, problems.join("; "));
});
