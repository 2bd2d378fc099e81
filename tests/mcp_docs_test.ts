/**
 * docs/mcp.md lists every tool with its input and an example, generated from the tools as the
 * server lists them; every example runs against a live service. Regenerate the reference with
 * `UPDATE_DOCS=1 deno test -A --unstable-kv tests/mcp_docs_test.ts`.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeUser, withCloud } from "./cloud_harness.ts";
import { connectMcp, MCP_TEST_LIMITS } from "./mcp_harness.ts";
import { toolsMarkdown } from "../cloud/mcp/docs.ts";
import { OTHER_TEAM_ID, SHARE_ID, TOOL_EXAMPLES } from "../cloud/mcp/examples.ts";
import { EXAMPLE_IDS } from "../cloud/api/mod.ts";
import { defaultHostname } from "../cloud/mod.ts";
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

Deno.test("docs/mcp.md: what it says about loopback names, binding, Inspector and rollbacks holds", async () => {
  const doc = await Deno.readTextFile(DOC);
  const says = (re: RegExp) => assertMatch(doc, re, `docs/mcp.md does not say ${re}`);
  // The old claim was wrong while the service listened on 0.0.0.0: the Host check is no firewall.
  assert(!doc.includes("nothing off the machine reaches a loopback listener"));
  says(/This check is not a firewall/);
  says(/listens on `127\.0\.0\.1` only unless `--hostname` says otherwise/);
  assertEquals(defaultHostname("http://localhost:8000"), "127.0.0.1");
  assertEquals(defaultHostname(undefined), "127.0.0.1");
  says(/MCP Inspector\*\* \(`npx @modelcontextprotocol\/inspector`.*\) needs\s+Node\.js\s+22/s);
  // Every tool the rollback section names exists.
  const tools = [...doc.matchAll(/^### `([a-z-]+)`/gm)].map((m) => m[1]);
  for (const name of ["list-gateway-config-versions", "rollback-gateway-config"]) {
    assert(tools.includes(name), name);
  }
  assert(tools.includes("resume-gateway-config"));
});
