/**
 * The module-face rule of DESIGN.md, checked: in the product (`gateway/`, `cloud/`, `cli/`,
 * `shared/`; `.ts` and `.tsx`), a file imports from another folder only through that folder's
 * `mod.ts`, and the gateway and gwcli never import the cloud service (nor the reverse); what they
 * share lives in `shared/`. Import circles are checked by `import_circles.ts`. Tests (`*_test.ts`, `tests/`), benchmarks and fixtures may reach internals: they
 * measure and test them.
 *
 *   deno run --allow-read tests/support/module_faces.ts     (part of `deno task check`)
 */
import { dirname, join, normalize, relative } from "node:path";
import { importCycles, isProductSource } from "./import_circles.ts";
import { REPO_ROOT } from "./paths.ts";

export { importCycles };

/** The product's top folders. */
const PRODUCT = ["gateway", "cloud", "cli", "shared"];

/** Top folders that must not import each other. */
const SEPARATE: [string, string][] = [["gateway", "cloud"], ["cli", "cloud"]];

const IMPORT =
  /(?:\bimport|\bexport)\s[^'";]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']|\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sources(path);
    else if (isProductSource(entry.name)) yield path;
  }
}

/** `file -> target: why` for every import that breaks the rule, relative to `root`. */
export async function faceViolations(root: string = REPO_ROOT): Promise<string[]> {
  const out: string[] = [];
  for (const top of PRODUCT) {
    for await (const file of sources(join(root, top))) {
      const dir = dirname(file);
      const text = await Deno.readTextFile(file);
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2];
        const target = normalize(join(dir, spec));
        const from = relative(root, file);
        const to = relative(root, target);
        const [fromTop, toTop] = [from.split("/")[0], to.split("/")[0]];
        if (
          SEPARATE.some(([a, b]) =>
            (fromTop === a && toTop === b) || (fromTop === b && toTop === a)
          )
        ) {
          out.push(
            `${from} -> ${to}: ${fromTop}/ must not import ${toTop}/ (share code in shared/)`,
          );
          continue;
        }
        if (!/\.tsx?$/.test(spec) || target.endsWith("/mod.ts")) continue;
        const targetDir = dirname(target);
        if ((dir + "/").startsWith(targetDir + "/")) continue;
        out.push(`${from} -> ${to}: import ${relative(root, targetDir)}/mod.ts instead`);
      }
    }
  }
  return out.sort();
}

if (import.meta.main) {
  const problems = await faceViolations();
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`${problems.length} import(s) bypass a module face (see DESIGN.md, section 2)`);
    Deno.exit(1);
  }
}
