/**
 * What starting the gateway loads: the npm packages that only some configurations use are
 * imported with `import()` where they are first needed (docs/decisions.md, "Packages a
 * configuration may never use load on first use"), so a gateway, each of its data-plane isolates
 * and every test that imports it do not pay for loading them. The static import graph of
 * `gateway/runtime/mod.ts` (what the gateway and each of its isolates load) is read with
 * `deno info --json`; each such package must be absent from it and still be reachable through a
 * literal `import()` (so `deno compile` bundles it). The image codecs of DICOM rendering are loaded
 * by the rendering worker only: they must be in its graph instead, and the worker bundled.
 */
import { assert, assertEquals } from "./assert.ts";
import { REPO_ROOT } from "./support/mod.ts";

/** Packages a gateway loads only when a configuration uses them. */
const ON_FIRST_USE = [
  "@aws-sdk/client-s3", // storage backends with an s3:// root
  "age-encryption", // the cloud token file and tracked content
  "ajv", // JMIX package validation
  "dcmjs", // DICOM endpoints and backends; a DICOM body shown by tracking or as a dead letter
  "dcmjs-dimse", // DICOM: dicom_scp endpoints and dicom_scu backends (the DIMSE stack)
  "fflate", // jmix endpoints (JMIX package zip files)
  "ioredis", // rate limits kept in Redis
  "nats", // JetStream delivery queues
  "nodemailer", // e-mail alert channels
];

/** Packages only the DICOM rendering worker loads (started with the first rendered frame). */
const RENDER_WORKER = "gateway/dicom/render/worker.ts";
const IN_RENDER_WORKER = [
  "fast-png", // PNG renderings
  "jpeg-js", // JPEG renderings, JPEG baseline frames
  "jpeg-lossless-decoder-js", // JPEG lossless frames
];

interface InfoDependency {
  specifier: string;
  code?: { specifier: string };
  isDynamic?: boolean;
}

interface InfoModule {
  specifier: string;
  dependencies?: InfoDependency[];
}

/** The npm package of a resolved module specifier (either form Deno prints), or undefined. */
function packageOf(specifier: string): string | undefined {
  const local = specifier.match(/\/node_modules\/\.deno\/([^/]+?)@\d[^/]*\//);
  if (local) return local[1].replace("+", "/");
  const npm = specifier.match(/^npm:\/?((?:@[^/@]+\/)?[^/@]+)@/);
  return npm?.[1];
}

async function moduleGraph(root: string): Promise<Map<string, InfoModule>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: InfoModule[];
  };
  return new Map(info.modules.map((m) => [m.specifier, m]));
}

/** Packages reached from `root` through static imports only, and those a dynamic import names. */
function packagesReached(
  graph: Map<string, InfoModule>,
  root: string,
): { staticPackages: Set<string>; dynamicPackages: Set<string> } {
  const staticPackages = new Set<string>();
  const dynamicTargets: string[] = [];
  const seen = new Set([root]);
  const queue = [root];
  while (queue.length) {
    const specifier = queue.pop()!;
    const pkg = packageOf(specifier);
    if (pkg) {
      staticPackages.add(pkg);
      continue; // a package's own imports are its business
    }
    for (const dep of graph.get(specifier)?.dependencies ?? []) {
      const target = dep.code?.specifier;
      if (!target) continue; // `import type`: nothing loads
      if (dep.isDynamic) {
        dynamicTargets.push(target);
        continue;
      }
      if (!seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  // What a dynamic import brings in: the package it names, or the packages its module imports.
  const dynamicPackages = new Set<string>();
  const seenDynamic = new Set<string>();
  while (dynamicTargets.length) {
    const specifier = dynamicTargets.pop()!;
    if (seenDynamic.has(specifier)) continue;
    seenDynamic.add(specifier);
    const pkg = packageOf(specifier);
    if (pkg) {
      dynamicPackages.add(pkg);
      continue;
    }
    for (const dep of graph.get(specifier)?.dependencies ?? []) {
      if (dep.code?.specifier) dynamicTargets.push(dep.code.specifier);
    }
  }
  return { staticPackages, dynamicPackages };
}

Deno.test("startup: packages that only some configurations use are not in the gateway's static import graph", async () => {
  // What every isolate loads (gateway/main.ts imports it when it runs a gateway).
  const root = new URL("../gateway/runtime/mod.ts", import.meta.url).href;
  const graph = await moduleGraph(root);
  assert(graph.has(root), "deno info did not list gateway/runtime/mod.ts");
  const { staticPackages, dynamicPackages } = packagesReached(graph, root);
  // The walk sees packages at all (the test would pass vacuously if it saw none).
  assert(staticPackages.has("hono"), `no hono among ${[...staticPackages].join(", ")}`);
  assertEquals(ON_FIRST_USE.filter((p) => staticPackages.has(p)), []);
  assertEquals(ON_FIRST_USE.filter((p) => !dynamicPackages.has(p)), []);
});

Deno.test("startup: the image codecs are loaded by the rendering worker only, which deno compile bundles", async () => {
  const root = new URL("../gateway/runtime/mod.ts", import.meta.url).href;
  const runtime = packagesReached(await moduleGraph(root), root);
  assertEquals(
    IN_RENDER_WORKER.filter((p) => runtime.staticPackages.has(p) || runtime.dynamicPackages.has(p)),
    [],
  );
  const worker = new URL(`../${RENDER_WORKER}`, import.meta.url).href;
  const { staticPackages } = packagesReached(await moduleGraph(worker), worker);
  assertEquals(IN_RENDER_WORKER.filter((p) => !staticPackages.has(p)), []);
  // The worker is a module Worker (pool.ts), not an import: the compiled gateway includes it.
  const compile = await Deno.readTextFile(`${REPO_ROOT}/deploy/release/compile.ts`);
  assert(
    compile.includes(`"${RENDER_WORKER}"`),
    `deploy/release/compile.ts does not include ${RENDER_WORKER}`,
  );
});

Deno.test("startup: packageOf reads both forms of a resolved npm specifier", () => {
  assertEquals(
    packageOf(
      "file:///r/node_modules/.deno/@aws-sdk+client-s3@3.1169.0/node_modules/@aws-sdk/client-s3/dist-cjs/index.js",
    ),
    "@aws-sdk/client-s3",
  );
  assertEquals(packageOf("npm:/ajv@8.20.0/dist/2020.js"), "ajv");
  assertEquals(packageOf("npm:@aws-sdk/client-s3@3.1169.0"), "@aws-sdk/client-s3");
  assertEquals(packageOf("file:///r/gateway/main.ts"), undefined);
});
