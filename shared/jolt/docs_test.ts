/**
 * Every example in docs/transforms.md runs as documented: each `json input` block with the
 * `json spec` and `json output` blocks after it (operation from the section heading), and each
 * row of the functions table (a modify-overwrite-beta spec, an input, an output).
 */

import { assertJson, run } from "../../tests/support/jolt.ts";

const DOC = new URL("../../docs/transforms.md", import.meta.url);
const text = Deno.readTextFileSync(DOC);

const SECTION_OPERATION: Record<string, string> = {
  "shift": "shift",
  "default": "default",
  "remove": "remove",
  "sort": "sort",
  "cardinality": "cardinality",
  "modify-overwrite-beta, modify-default-beta, modify-define-beta": "modify-overwrite-beta",
};

interface Example {
  section: string;
  blocks: Record<string, string>;
}

function examples(): Example[] {
  const out: Example[] = [];
  let section = "";
  let current: Example | null = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("## ")) section = line.slice(3).trim();
    const fence = /^```json (input|spec|output)$/.exec(line);
    if (!fence) continue;
    const body: string[] = [];
    while (!lines[++i].startsWith("```")) body.push(lines[i]);
    if (fence[1] === "input") out.push(current = { section, blocks: {} });
    current!.blocks[fence[1]] = body.join("\n");
  }
  return out;
}

let n = 0;
for (const ex of examples()) {
  const operation = SECTION_OPERATION[ex.section];
  Deno.test(`docs example ${++n} (${ex.section})`, () => {
    if (!operation) throw new Error(`no operation for section ${ex.section}`);
    const spec = JSON.parse(ex.blocks.spec);
    const input = JSON.parse(ex.blocks.input);
    assertJson(run(operation, spec ?? undefined, input), JSON.parse(ex.blocks.output));
  });
}

const functionsSection = text.slice(text.indexOf("## Functions"), text.indexOf("## Differences"));
let functionRows = 0;
for (const line of functionsSection.split("\n")) {
  const cells = line.split(" | ").map((c) => c.replace(/^\|\s*|\s*\|$/g, "").trim());
  if (cells.length !== 4 || !cells[1].startsWith("`{")) continue;
  const [name, spec, input, output] = cells.map((c) => c.replace(/^`|`$/g, ""));
  functionRows++;
  Deno.test(`docs function example: ${name}`, () => {
    assertJson(
      run("modify-overwrite-beta", JSON.parse(spec), JSON.parse(input)),
      JSON.parse(output),
    );
  });
}

Deno.test("docs: the examples were found", () => {
  assertJson(n, 8);
  assertJson(functionRows, 47);
});
