/**
 * docs/configuration.md embeds the key reference rendered from the schema and the complete
 * example fixture; this test keeps both current. Regenerate with
 * `UPDATE_DOCS=1 deno test -A gateway/config/docs_test.ts`.
 */
import assert from "node:assert/strict";
import { configReferenceMarkdown } from "../../shared/gateway_config/mod.ts";

const ROOT = new URL("../../", import.meta.url);
const DOC = new URL("docs/configuration.md", ROOT);

/** Replaces what lies between the begin and end marker lines of `name`. */
function replaceBlock(doc: string, name: string, body: string): string {
  const begin = new RegExp(`(<!-- ${name}:begin[^\\n]*-->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
  assert.match(doc, begin, `markers of ${name} missing`);
  return doc.replace(begin, (_m, open: string, close: string) => `${open}${body}${close}`);
}

async function expectedDoc(current: string): Promise<string> {
  const fixture = (path: string) => Deno.readTextFile(new URL(`fixtures/configs/${path}`, ROOT));
  const reference = "<!-- deno-fmt-ignore-start -->\n" + configReferenceMarkdown() +
    "<!-- deno-fmt-ignore-end -->\n";
  // Blank lines around the code blocks, as deno fmt writes them.
  const example = "\n```toml\n" + await fixture("full.toml") +
    "```\n\n`full.d/echo.toml`:\n\n```toml\n" + await fixture("full.d/echo.toml") + "```\n\n";
  return replaceBlock(replaceBlock(current, "reference", reference), "example", example);
}

Deno.test("docs/configuration.md: reference and complete example match the schema and fixture", async () => {
  const current = await Deno.readTextFile(DOC);
  const expected = await expectedDoc(current);
  if (Deno.env.get("UPDATE_DOCS") === "1" && current !== expected) {
    await Deno.writeTextFile(DOC, expected);
    return;
  }
  assert.equal(current, expected, "run: UPDATE_DOCS=1 deno test -A gateway/config/docs_test.ts");
});
