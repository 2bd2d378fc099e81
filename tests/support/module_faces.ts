/**
 * The module-face rule of DESIGN.md, checked: in the product (`gateway/`, `cloud/`, `cli/`,
 * `shared/`), a file imports from another folder only through that folder's `mod.ts`, and the
 * gateway and gwcli never import the cloud service (nor the reverse); what they share lives in
 * `shared/`. Tests (`*_test.ts`, `tests/`), benchmarks and fixtures may reach internals: they
 * measure and test them.
 *
 *   deno run --allow-read tests/support/module_faces.ts     (part of `deno task check`)
 */
import { dirname, join, normalize, relative } from "node:path";
import { REPO_ROOT } from "./paths.ts";

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
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) yield path;
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
        if (!spec.endsWith(".ts") || target.endsWith("/mod.ts")) continue;
        const targetDir = dirname(target);
        if ((dir + "/").startsWith(targetDir + "/")) continue;
        out.push(`${from} -> ${to}: import ${relative(root, targetDir)}/mod.ts instead`);
      }
    }
  }
  return out.sort();
}

/**
 * The import cycles among the files of `dir` (its own files, type imports included): each cycle as
 * the files in it, sorted. Tests are left out.
 */
export async function importCycles(dir: string): Promise<string[][]> {
  const graph = new Map<string, string[]>();
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".ts") || entry.name.endsWith("_test.ts")) continue;
    const text = await Deno.readTextFile(join(dir, entry.name));
    const local = [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2])
      .filter((spec) => /^\.\/[^/]+\.ts$/.test(spec)).map((spec) => spec.slice(2));
    graph.set(entry.name, local);
  }
  // Tarjan's strongly connected components; a component of two or more files is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

if (import.meta.main) {
  const problems = await faceViolations();
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`${problems.length} import(s) bypass a module face (see DESIGN.md, section 2)`);
    Deno.exit(1);
  }
}
