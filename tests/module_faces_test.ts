/** The module-face rule (DESIGN.md section 2) holds, and the checker would see a breach. */
import { assertEquals } from "./assert.ts";
import { faceViolations } from "./support/module_faces.ts";
import { removeDir, tempDir } from "./support/mod.ts";

Deno.test("module faces: the product imports other folders only through their mod.ts", async () => {
  assertEquals(await faceViolations(), []);
});

Deno.test("module faces: an internal import and a gateway -> cloud import are reported", async () => {
  const root = await tempDir("faces-");
  try {
    for (const dir of ["gateway/a", "gateway/b", "cloud/x", "cli", "shared"]) {
      await Deno.mkdir(`${root}/${dir}`, { recursive: true });
    }
    await Deno.writeTextFile(`${root}/gateway/b/mod.ts`, `export * from "./inner.ts";\n`);
    await Deno.writeTextFile(`${root}/gateway/b/inner.ts`, `export const x = 1;\n`);
    await Deno.writeTextFile(`${root}/cloud/x/mod.ts`, `export const y = 2;\n`);
    await Deno.writeTextFile(
      `${root}/gateway/a/use.ts`,
      `import { x } from "../b/inner.ts";\nimport { x as z } from "../b/mod.ts";\n` +
        `import type { y } from "../../cloud/x/mod.ts";\n`,
    );
    // A test may reach internals.
    await Deno.writeTextFile(`${root}/gateway/a/use_test.ts`, `import "../b/inner.ts";\n`);
    assertEquals(await faceViolations(root), [
      "gateway/a/use.ts -> cloud/x/mod.ts: gateway/ must not import cloud/ (share code in shared/)",
      "gateway/a/use.ts -> gateway/b/inner.ts: import gateway/b/mod.ts instead",
    ]);
  } finally {
    await removeDir(root);
  }
});
