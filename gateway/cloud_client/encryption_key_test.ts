import assert from "node:assert/strict";
import { generateHybridIdentity, generateX25519Identity } from "age-encryption";
import { EncryptionKeyError, parseEncryptionKey } from "./encryption_key.ts";

Deno.test("parseEncryptionKey: the identity as it is, base64-encoded, or a base64 key file", async () => {
  const identity = await generateX25519Identity();
  const keyFile = `# created: 2026-01-01T00:00:00Z\n# public key: age1example\n${identity}\n`;
  const forms = [
    identity,
    ` ${identity}\n`,
    btoa(identity),
    btoa(keyFile),
    btoa(keyFile).replace(/=+$/, ""),
  ];
  const parsed = await Promise.all(forms.map(parseEncryptionKey));
  for (const key of parsed) {
    assert.equal(key.identity, identity);
    assert.match(key.recipient, /^age1[0-9a-z]+$/);
  }
});

Deno.test("parseEncryptionKey: anything else is refused, naming what was expected and never the value", async () => {
  const pq = await generateHybridIdentity();
  const x = await generateX25519Identity();
  const cases: [string, RegExp][] = [
    ["", /it is empty/],
    ["hunter2!?", /neither an AGE-SECRET-KEY-1… identity nor base64/],
    [btoa("hello"), /no AGE-SECRET-KEY-1… identity in it/],
    [btoa(`${x}\n${x}\n`), /more than one line/],
    [x.slice(0, -1) + (x.endsWith("Q") ? "P" : "Q"), /does not decode/],
    [pq, /post-quantum/],
    [btoa(String.fromCharCode(0xff, 0xfe, 0x00)), /does not decode to text/],
  ];
  for (const [value, reason] of cases) {
    const err = await parseEncryptionKey(value).then(() => undefined, (e) => e);
    assert.ok(err instanceof EncryptionKeyError, `${value}: ${err}`);
    assert.match(err.message, reason, value);
    assert.match(err.message, /^GATEWAY_ENCRYPTION_KEY is not usable: .*age-keygen/);
    if (value.length > 4) assert.ok(!err.message.includes(value), "the value is not echoed");
  }
});
