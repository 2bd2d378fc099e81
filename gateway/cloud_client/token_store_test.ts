import assert from "node:assert/strict";
import { generateX25519Identity } from "age-encryption";
import { Logger } from "../../shared/log.ts";
import { parseEncryptionKey } from "./encryption_key.ts";
import { tokenFilePath } from "./token_file.ts";
import { MachineTokenStore } from "./token_store.ts";
import { testPayload } from "../../tests/support/machine_tokens.ts";

function logger() {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: new Logger({ level: "debug", format: "json", sink: (l) => lines.push(JSON.parse(l)) }),
  };
}

Deno.test("MachineTokenStore: with a key the token is persisted and read back by a new store", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const key = await parseEncryptionKey(await generateX25519Identity());
    const { logger: log, lines } = logger();
    const store = new MachineTokenStore(key, log);
    assert.equal(await store.open(dir), undefined);
    let changes = 0;
    store.onChange(() => changes++);
    const payload = testPayload();
    const held = await store.set(payload, "management_api", true);
    assert.deepEqual([held.persisted, held.verified, held.source], [true, true, "management_api"]);
    assert.equal(changes, 1);
    const again = new MachineTokenStore(key, log);
    assert.deepEqual(await again.open(dir), payload);
    await store.clear();
    assert.equal(store.current, undefined);
    assert.equal(changes, 2);
    await assert.rejects(() => Deno.stat(tokenFilePath(dir)));
    assert.ok(!JSON.stringify(lines).includes(payload.machine_token));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MachineTokenStore: without a key nothing is written or read, and a leftover file is mentioned", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(tokenFilePath(dir), "sealed");
    const { logger: log, lines } = logger();
    const store = new MachineTokenStore(undefined, log);
    assert.equal(await store.open(dir), undefined);
    assert.equal(store.persistent, false);
    assert.ok(lines.some((l) => String(l.msg).includes("GATEWAY_ENCRYPTION_KEY is not set")));
    const held = await store.set(testPayload(), "environment", false);
    assert.equal(held.persisted, false);
    assert.equal(await Deno.readTextFile(tokenFilePath(dir)), "sealed", "left alone");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MachineTokenStore: a state directory that cannot be written keeps the token in memory, logged", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/file`, "");
    const key = await parseEncryptionKey(await generateX25519Identity());
    const { logger: log, lines } = logger();
    const store = new MachineTokenStore(key, log);
    await store.open(`${dir}/file/state`); // a path below a file: never writable
    const held = await store.set(testPayload(), "authorize", true);
    assert.equal(held.persisted, false);
    assert.equal(store.current?.source, "authorize");
    assert.ok(
      lines.some((l) => String(l.msg).startsWith("cannot write the machine-token state file")),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
