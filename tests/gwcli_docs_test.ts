/**
 * docs/cli.md stays in step with gwcli: every command has a section, the `list` example is real,
 * and the release-key pinning it describes is what gwcli does.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { buildProgram, CliContext, commandList, envOf } from "../cli/mod.ts";
import { RELEASE_PUBLIC_KEYS, requireTrustedKeys, trustedReleaseKeys } from "../cli/install/mod.ts";
import { generateReleaseKey, releaseKeyProblem } from "../shared/mod.ts";
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

Deno.test("docs/cli.md says how to pin the release key, and what it says holds", async () => {
  const doc = await Deno.readTextFile(`${REPO_ROOT}/docs/cli.md`);
  const section = doc.slice(doc.indexOf("## Pinning the release key"));
  assert(section.startsWith("## Pinning the release key"), "the section exists");
  // The built-in list is empty in this tree, and the docs say so (or name the keys it holds).
  if (RELEASE_PUBLIC_KEYS.length === 0) {
    assertMatch(section, /this source tree trusts none.*RELEASE_PUBLIC_KEYS.* is empty/s);
  } else {
    for (const key of RELEASE_PUBLIC_KEYS) assert(doc.includes(key), `docs name ${key}`);
  }
  assertMatch(section, /export GWCLI_RELEASE_PUBLIC_KEY=/);
  assertMatch(section, /deno task release --keygen/);
  // A key as `--keygen` prints it: 44 characters ending in `=`, trusted when pinned.
  const { publicKey } = await generateReleaseKey();
  assertMatch(publicKey, /^[A-Za-z0-9+/]{43}=$/);
  assertEquals(
    trustedReleaseKeys(envOf({ GWCLI_RELEASE_PUBLIC_KEY: publicKey })).at(-1),
    publicKey,
  );
  // The DER-wrapped form the docs warn about is refused with the quoted message.
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const spki = btoa(String.fromCharCode(
    ...new Uint8Array(await crypto.subtle.exportKey("spki", (pair as CryptoKeyPair).publicKey)),
  ));
  assert(spki.startsWith("MCowBQYDK2Vw"), spki);
  assertEquals(releaseKeyProblem(spki), "an Ed25519 public key is 32 bytes, base64-encoded");
  assert(section.includes("an Ed25519 public key is 32 bytes, base64-encoded"));
  // The error without a key names this section.
  let hint = "";
  try {
    requireTrustedKeys([]);
  } catch (err) {
    hint = (err as { hint?: string }).hint ?? "";
  }
  assertMatch(hint, /"Pinning the release key"/);
});
