/** docs/errors.md lists every error code the gateway can answer with (issue #2, acceptance 6). */
import { assertEquals } from "./assert.ts";
import { REPO_ROOT } from "./support/mod.ts";

/** Source files of the gateway, tests left out. */
async function* gatewaySources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* gatewaySources(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) yield path;
  }
}

// `new GatewayError(404, "no_route", …)` and the management API's `fail(c, 403, "cloud_disabled", …)`.
const ERROR_CODE = /(?:GatewayError|fail)\(\s*(?:c,\s*)?[^,()]+,\s*"([a-z][a-z0-9_]*)"/g;

Deno.test("docs/errors.md documents every error code used in gateway/", async () => {
  const docs = await Deno.readTextFile(`${REPO_ROOT}/docs/errors.md`);
  const codes = new Map<string, string>();
  for await (const file of gatewaySources(`${REPO_ROOT}/gateway`)) {
    const text = await Deno.readTextFile(file);
    for (const match of text.matchAll(ERROR_CODE)) codes.set(match[1], file);
  }
  // The scan must find the codes it is meant to find, or it proves nothing.
  for (const known of ["no_route", "payload_too_large", "backend_timeout", "cloud_disabled"]) {
    assertEquals(codes.has(known), true, `the scan missed ${known}`);
  }
  const missing = [...codes].filter(([code]) => !docs.includes("`" + code + "`"))
    .map(([code, file]) => `${code} (${file.slice(REPO_ROOT.length + 1)})`);
  assertEquals(missing, [], "codes missing from docs/errors.md");
});
