/**
 * The no-circle rule of docs/architecture.md ("Import rules"), checked: no file of the product
 * imports itself back through a chain of relative imports (type imports count: a circle of types
 * still ties the files into one knot). Tests (`*_test.ts`, `tests/`), benchmarks (`bench/`) and
 * fixtures (`fixtures/`) are left out.
 *
 *   deno run --allow-read tests/support/import_circles.ts     (part of `deno task check`)
 *
 * @module
 */
import { dirname, join, normalize, relative } from "node:path";
import { REPO_ROOT } from "./paths.ts";

/** The folders of the product whose files may not import each other in a circle. */
const PRODUCT_DIRS = ["gateway", "cloud", "cli", "shared", "deploy"];

/**
 * A relative import or re-export: a statement that opens a line (so a JSDoc example line, which
 * opens with `*`, is not one), or a dynamic `import("./x.ts")` with a literal name.
 */
const STATIC_IMPORT =
  /^[ \t]*(?:import|export)\b(?:[^;"'`]*?\bfrom)?\s*["'](\.{1,2}\/[^"']+)["']/gm;
const DYNAMIC_IMPORT = /^(?![ \t]*(?:\*|\/\/)).*?\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/gm;

/** One import circle: its files (sorted) and one closed path through them, first file last again. */
export interface ImportCircle {
  files: string[];
  path: string[];
}

/** Whether `name` is product source: TypeScript (`.ts`, `.tsx`), not a test. */
export function isProductSource(name: string): boolean {
  return /\.tsx?$/.test(name) && !/_test\.tsx?$/.test(name) && !name.endsWith(".d.ts");
}

/** The relative module names that `text` imports or re-exports, in order of appearance. */
export function relativeImports(text: string): string[] {
  const found: [number, string][] = [];
  for (const m of text.matchAll(STATIC_IMPORT)) found.push([m.index, m[1]]);
  for (const m of text.matchAll(DYNAMIC_IMPORT)) found.push([m.index, m[1]]);
  return found.sort((a, b) => a[0] - b[0]).map(([, spec]) => spec);
}

async function* sources(dir: string): AsyncGenerator<string> {
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sources(path);
    else if (entry.isFile && isProductSource(entry.name)) yield path;
  }
}

/**
 * The import graph of the product under `root`: each file (relative to `root`) to the product files
 * it imports. `dirs` are the folders read (defaults: the product's); the `.ts`/`.tsx` files at
 * `root` itself are read too.
 */
export async function importGraph(
  root: string = REPO_ROOT,
  dirs: string[] = PRODUCT_DIRS,
): Promise<Map<string, string[]>> {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(root)) {
    if (entry.isFile && isProductSource(entry.name)) files.push(join(root, entry.name));
  }
  for (const dir of dirs) for await (const file of sources(join(root, dir))) files.push(file);
  const known = new Set(files.map((file) => relative(root, file)));
  const graph = new Map<string, string[]>();
  for (const file of files.sort()) {
    const text = await Deno.readTextFile(file);
    const targets = relativeImports(text)
      .map((spec) => relative(root, normalize(join(dirname(file), spec))))
      .filter((target) => known.has(target));
    graph.set(relative(root, file), [...new Set(targets)]);
  }
  return graph;
}

/**
 * The circles of `graph`: its strongly connected components of two or more files (Tarjan), each
 * with one closed path through it, so a report can say which import to cut.
 */
export function circlesOf(graph: Map<string, string[]>): ImportCircle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
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
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components
    .map((files) => ({ files, path: shortestLoop(graph, files) }))
    .sort((a, b) => a.files[0].localeCompare(b.files[0]));
}

/** The shortest path from the first of `files` back to itself, staying inside `files`. */
function shortestLoop(graph: Map<string, string[]>, files: string[]): string[] {
  const inside = new Set(files);
  const start = files[0];
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at = v; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return files;
}

/** The import circles of the product under `root` (see {@link importGraph}). */
export async function importCircles(
  root: string = REPO_ROOT,
  dirs: string[] = PRODUCT_DIRS,
): Promise<ImportCircle[]> {
  return circlesOf(await importGraph(root, dirs));
}

/**
 * The import circles among the files of one folder `dir` (its own files only): each circle as its
 * file names, sorted.
 */
export async function importCycles(dir: string): Promise<string[][]> {
  const circles = await importCircles(dir, []);
  return circles.map((circle) => circle.files);
}

/** One line per circle: its size, the closed path, and every file in it. */
export function describeCircle(circle: ImportCircle): string {
  return `circle of ${circle.files.length} files: ${circle.path.join(" -> ")}\n  files: ${
    circle.files.join(", ")
  }`;
}

if (import.meta.main) {
  const circles = await importCircles();
  for (const circle of circles) console.error(describeCircle(circle));
  if (circles.length) {
    console.error(
      `${circles.length} import circle(s) in product code (see docs/architecture.md, Import rules)`,
    );
    Deno.exit(1);
  }
}
