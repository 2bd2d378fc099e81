/** The sample transforms in fixtures/transforms/ produce their expected outputs. */

import { parseSpec } from "./mod.ts";
import { assertJson, frozen } from "../../tests/support/jolt.ts";

const DIR = new URL("../../fixtures/transforms/", import.meta.url);

for (const entry of Deno.readDirSync(DIR)) {
  if (!entry.isFile || !entry.name.endsWith(".json")) continue;
  const name = entry.name.slice(0, -".json".length);
  Deno.test(`fixture transform ${name} gives its expected output`, async () => {
    const spec = parseSpec(await Deno.readTextFile(new URL(entry.name, DIR)));
    const read = async (suffix: string) =>
      JSON.parse(await Deno.readTextFile(new URL(`samples/${name}.${suffix}.json`, DIR)));
    assertJson(spec.apply(frozen(await read("input"))), await read("expected"));
  });
}
