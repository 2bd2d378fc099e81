/** The module-face rule (DESIGN.md section 2) holds, and the checker would see a breach. */
import { assertEquals } from "./assert.ts";
import { faceViolations, importCycles } from "./support/module_faces.ts";
import { REPO_ROOT } from "./support/mod.ts";
import { removeDir, tempDir } from "./support/mod.ts";

Deno.test("module faces: the product imports other folders only through their mod.ts", async () => {
  assertEquals(await faceViolations(), []);
});

Deno.test("module faces: internal imports (.ts and .tsx) and a gateway -> cloud import are reported", async () => {
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
    await Deno.writeTextFile(`${root}/cloud/x/inner.tsx`, `export const v = <b />;\n`);
    await Deno.writeTextFile(
      `${root}/cloud/page.tsx`,
      `import { v } from "./x/inner.tsx";\nimport { y } from "./x/mod.ts";\n`,
    );
    // A test may reach internals.
    await Deno.writeTextFile(`${root}/gateway/a/use_test.ts`, `import "../b/inner.ts";\n`);
    assertEquals(await faceViolations(root), [
      "cloud/page.tsx -> cloud/x/inner.tsx: import cloud/x/mod.ts instead",
      "gateway/a/use.ts -> cloud/x/mod.ts: gateway/ must not import cloud/ (share code in shared/)",
      "gateway/a/use.ts -> gateway/b/inner.ts: import gateway/b/mod.ts instead",
    ]);
  } finally {
    await removeDir(root);
  }
});

Deno.test("import cycles: none inside the JOLT engine or its fast path, which the engine never imports", async () => {
  for (const dir of ["", "/engine", "/fast"]) {
    assertEquals(await importCycles(`${REPO_ROOT}/shared/jolt${dir}`), [], `shared/jolt${dir}`);
  }
  for await (const entry of Deno.readDir(`${REPO_ROOT}/shared/jolt/engine`)) {
    const text = await Deno.readTextFile(`${REPO_ROOT}/shared/jolt/engine/${entry.name}`);
    assertEquals(/from "\.\.\/fast\//.test(text), false, `engine/${entry.name} imports fast/`);
  }
  // The JSON tape reads no shift (nor any engine) code.
  const tape = await Deno.readTextFile(`${REPO_ROOT}/shared/jolt/fast/raw_json.ts`);
  assertEquals(/from "\.\.\/engine\//.test(tape), false, "fast/raw_json.ts imports engine/");
  const root = await tempDir("cycles-");
  try {
    await Deno.writeTextFile(
      `${root}/a.ts`,
      `import type { B } from "./b.ts";\nexport type A = B;\n`,
    );
    await Deno.writeTextFile(`${root}/b.ts`, `import { a } from "./a.ts";\nexport type B = 1;\n`);
    await Deno.writeTextFile(`${root}/c.ts`, `import "./a.ts";\n`);
    assertEquals(await importCycles(root), [["a.ts", "b.ts"]]);
  } finally {
    await removeDir(root);
  }
});
