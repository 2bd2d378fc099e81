/** The import-circle checker (tests/support/import_circles.ts): the product has no circle, and a circle would be seen. */
import { assertEquals } from "./assert.ts";
import { describeCircle, importCircles, relativeImports } from "./support/import_circles.ts";
import { removeDir, tempDir } from "./support/mod.ts";

Deno.test("import circles: none in product code", async () => {
  const circles = await importCircles();
  assertEquals(circles.map(describeCircle), []);
});

Deno.test("import circles: static, type, re-export, side-effect and dynamic imports; comments are not imports", () => {
  const text = [
    "/**",
    " * @example",
    ' * import { x } from "./example.ts";',
    " */",
    '// import "./commented.ts";',
    'import type { A } from "./a.ts";',
    "import {",
    "  b,",
    "  c,",
    '} from "../b/mod.ts";',
    'import "./side.ts";',
    'export * from "./re.tsx";',
    'export { d } from "./d.ts";',
    'import { e } from "hono";',
    'const f = "./not_an_import.ts";',
    'const g = await import("./lazy.ts");',
  ].join("\n");
  assertEquals(relativeImports(text), [
    "./a.ts",
    "../b/mod.ts",
    "./side.ts",
    "./re.tsx",
    "./d.ts",
    "./lazy.ts",
  ]);
});

Deno.test("import circles: a circle through folders and .tsx files is reported with its files and a path; tests, benchmarks and fixtures are left out", async () => {
  const root = await tempDir("circles-");
  try {
    for (const dir of ["cloud/api", "cloud/auth", "cli", "tests", "bench", "fixtures"]) {
      await Deno.mkdir(`${root}/${dir}`, { recursive: true });
    }
    const write = (path: string, text: string) => Deno.writeTextFile(`${root}/${path}`, text);
    // cloud/services.ts -> cloud/api/mod.ts -> cloud/api/page.tsx -> cloud/auth/mod.ts -> cloud/services.ts
    await write("cloud/services.ts", 'import { page } from "./api/mod.ts";\n');
    await write("cloud/api/mod.ts", 'export { page } from "./page.tsx";\n');
    await write("cloud/api/page.tsx", 'import type { P } from "../auth/mod.ts";\n');
    await write("cloud/auth/mod.ts", 'import type { S } from "../services.ts";\n');
    // Hangs on the circle without being in it.
    await write("cloud/main.ts", 'import "./services.ts";\n');
    // Two files of gwcli that import each other, one lazily.
    await write("cli/a.ts", 'import { b } from "./b.ts";\n');
    await write("cli/b.ts", 'const { a } = await import("./a.ts");\n');
    // Not product code: a test, and the folders of tests, benchmarks and fixtures.
    await write("cli/c_test.ts", 'import "./d.ts";\n');
    await write("cli/d.ts", 'import "./c_test.ts";\n');
    await write("tests/x.ts", 'import "./y.ts";\n');
    await write("tests/y.ts", 'import "./x.ts";\n');
    await write("bench/x.ts", 'import "../cloud/main.ts";\n');
    await write("fixtures/x.ts", 'import "./x.ts";\n');
    const circles = await importCircles(root);
    assertEquals(circles, [
      { files: ["cli/a.ts", "cli/b.ts"], path: ["cli/a.ts", "cli/b.ts", "cli/a.ts"] },
      {
        files: ["cloud/api/mod.ts", "cloud/api/page.tsx", "cloud/auth/mod.ts", "cloud/services.ts"],
        path: [
          "cloud/api/mod.ts",
          "cloud/api/page.tsx",
          "cloud/auth/mod.ts",
          "cloud/services.ts",
          "cloud/api/mod.ts",
        ],
      },
    ]);
    assertEquals(
      describeCircle(circles[0]),
      "circle of 2 files: cli/a.ts -> cli/b.ts -> cli/a.ts\n  files: cli/a.ts, cli/b.ts",
    );
  } finally {
    await removeDir(root);
  }
});
