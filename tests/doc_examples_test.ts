/**
 * Every public face (`mod.ts`) of the product opens with `@module` docs. Their runnable
 * `@example`s are run by `deno task check` (tests/support/doc_examples.ts).
 */
import { assert } from "./assert.ts";
import { publicFaces } from "./support/doc_examples.ts";
import { REPO_ROOT } from "./support/mod.ts";

Deno.test("public faces: every mod.ts has @module docs, and some carry runnable @examples", async () => {
  const missing: string[] = [];
  let examples = 0;
  for (const face of await publicFaces()) {
    const text = await Deno.readTextFile(face);
    if (!text.includes("@module")) missing.push(face.slice(REPO_ROOT.length + 1));
    if (text.includes("@example")) examples++;
  }
  assert(missing.length === 0, `no @module doc in: ${missing.join(", ")}`);
  assert(examples >= 20, `only ${examples} faces have an @example`);
});
