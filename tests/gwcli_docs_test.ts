/** docs/cli.md stays in step with gwcli: every command has a section, and the `list` example is real. */
import { assert, assertEquals } from "./assert.ts";
import { buildProgram, CliContext, commandList, envOf } from "../cli/mod.ts";
import { REPO_ROOT } from "./support/mod.ts";

Deno.test("docs/cli.md documents every command, and its `gwcli list` output is the real one", async () => {
  const doc = await Deno.readTextFile(`${REPO_ROOT}/docs/cli.md`);
  let listed = "";
  const ctx = new CliContext({
    env: envOf({ HOME: "/nonexistent" }),
    sinks: { stdout: (t) => listed += t, stderr: () => {} },
  });
  const program = buildProgram(ctx);
  const names = commandList(program).map(([name]) => name);
  const headings = [...doc.matchAll(/^### (.+)$/gm)].flatMap((m) => m[1].split(/,\s*/));
  for (const name of names) {
    assert(headings.includes(name), `docs/cli.md has no section for ${name}`);
  }
  await program.parseAsync(["list"], { from: "user" });
  const block = doc.match(/\$ gwcli list\n([\s\S]*?)\n```/);
  assert(block, "docs/cli.md shows `gwcli list`");
  assertEquals(block[1] + "\n", listed);
});
