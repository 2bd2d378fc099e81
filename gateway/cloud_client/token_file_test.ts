import assert from "node:assert/strict";
import { generateX25519Identity } from "age-encryption";
import { parseEncryptionKey } from "./encryption_key.ts";
import { readTokenFile, tokenFilePath, writeTokenFile } from "./token_file.ts";
import { testPayload } from "../../tests/support/machine_tokens.ts";

Deno.test("token file: written with mode 0600, read back with the key, unusable with another", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const key = await parseEncryptionKey(await generateX25519Identity());
    const path = tokenFilePath(`${dir}/state`);
    assert.deepEqual(await readTokenFile(path, key), { kind: "missing" });
    const payload = testPayload();
    await writeTokenFile(path, key, payload);
    if (Deno.build.os !== "windows") {
      assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
      assert.equal(Deno.statSync(`${dir}/state`).mode! & 0o777, 0o700);
    }
    assert.deepEqual(await readTokenFile(path, key), { kind: "token", payload });
    const other = await parseEncryptionKey(await generateX25519Identity());
    const wrong = await readTokenFile(path, other);
    assert.equal(wrong.kind, "unusable");
    assert.match((wrong as { reason: string }).reason, /cannot decrypt it/);
    await Deno.writeTextFile(path, "garbage");
    assert.equal((await readTokenFile(path, key)).kind, "unusable");
    assert.deepEqual([...Deno.readDirSync(`${dir}/state`)].map((e) => e.name), [
      "machine-token.age",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
