/**
 * docs/mcp.md lists every tool with its input and an example, generated from the tools as the
 * server lists them; every example runs against a live service. Regenerate the reference with
 * `UPDATE_DOCS=1 deno test -A --unstable-kv tests/mcp_docs_test.ts`.
 */
import { assert, assertEquals } from "./assert.ts";
import { makeUser, withCloud } from "./cloud_harness.ts";
import { connectMcp, MCP_TEST_LIMITS } from "./mcp_harness.ts";
import { toolsMarkdown } from "../cloud/mcp/docs.ts";
import { OTHER_TEAM_ID, SHARE_ID, TOOL_EXAMPLES } from "../cloud/mcp/examples.ts";
import { EXAMPLE_IDS } from "../cloud/api/mod.ts";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

const DOC = new URL("../docs/mcp.md", import.meta.url);

Deno.test("docs/mcp.md: the tool reference matches the tools, and every example runs", async () => {
  await withCloud(async (cloud) => {
    const a = await makeUser(cloud, "ada@example.com", "A");
    const b = await makeUser(cloud, "bob@example.com", "B");
    const mcp = await connectMcp(cloud, a.apiToken);
    try {
      const tools = (await mcp.client.listTools()).tools as Tool[];
      const current = await Deno.readTextFile(DOC);
      const block = /(<!-- tools:begin[^\n]*-->\n)[\s\S]*?(<!-- tools:end -->)/;
      assert(block.test(current), "tools markers missing");
      const expected = current.replace(
        block,
        (_m, open: string, close: string) =>
          `${open}<!-- deno-fmt-ignore-start -->\n${
            toolsMarkdown(tools)
          }<!-- deno-fmt-ignore-end -->\n${close}`,
      );
      if (Deno.env.get("UPDATE_DOCS") === "1" && current !== expected) {
        await Deno.writeTextFile(DOC, expected);
      } else {
        assertEquals(
          current,
          expected,
          "run: UPDATE_DOCS=1 deno test -A --unstable-kv " +
            "tests/mcp_docs_test.ts",
        );
      }
      const examples = new Set(TOOL_EXAMPLES.map(([name]) => name));
      assertEquals(tools.map((t) => t.name).filter((n) => !examples.has(n)), [], "no example");

      const ids = new Map<string, string>([[OTHER_TEAM_ID, b.team.id]]);
      const placeholders = new Map(Object.entries(EXAMPLE_IDS).map(([k, v]) => [k, v]));
      for (const [name, args] of TOOL_EXAMPLES) {
        let text = JSON.stringify(args);
        for (const [from, to] of ids) text = text.replaceAll(from, to);
        const out = await mcp.call(name, JSON.parse(text));
        if (name.startsWith("create-")) {
          const kind = Object.keys(EXAMPLE_IDS).find((k) =>
            out.record.id && name === `create-${singular(k)}`
          )!;
          ids.set(placeholders.get(kind)!, out.record.id);
        }
        if (name === "share-resource") ids.set(SHARE_ID, out.share.id);
      }
    } finally {
      await mcp.close();
    }
  }, MCP_TEST_LIMITS);
});

function singular(kind: string): string {
  return kind === "middleware" ? kind : kind.replace(/s$/, "");
}
