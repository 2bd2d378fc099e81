import assert from "node:assert/strict";
import { parseLegacyAuth, readLegacyAuth } from "./legacy_auth.ts";

const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";

Deno.test("legacy auth.json: every known shape, or nothing", () => {
  assert.deepEqual(parseLegacyAuth(JSON.stringify({ token: JWT })), { token: JWT });
  assert.deepEqual(parseLegacyAuth(JSON.stringify({ access_token: JWT, api_url: "https://c" })), {
    token: JWT,
    apiUrl: "https://c",
  });
  assert.deepEqual(parseLegacyAuth(JSON.stringify({ user_token: JWT, "api-url": "https://d" })), {
    token: JWT,
    apiUrl: "https://d",
  });
  assert.deepEqual(parseLegacyAuth(`${JWT}\n`), { token: JWT });
  assert.deepEqual(parseLegacyAuth(JSON.stringify(JWT)), { token: JWT });
  assert.equal(parseLegacyAuth("{}"), undefined);
  assert.equal(parseLegacyAuth('{"token": ""}'), undefined);
  assert.equal(parseLegacyAuth("not json"), undefined);
  assert.equal(parseLegacyAuth("[1,2]"), undefined);
});

Deno.test("legacy auth.json: missing, unreadable and readable files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.deepEqual(await readLegacyAuth(`${dir}/auth.json`), { found: false });
    await Deno.writeTextFile(`${dir}/auth.json`, "garbage");
    const garbage = await readLegacyAuth(`${dir}/auth.json`);
    assert(garbage.found && garbage.token === undefined);
    await Deno.writeTextFile(`${dir}/auth.json`, JSON.stringify({ token: JWT }));
    const ok = await readLegacyAuth(`${dir}/auth.json`);
    assert(ok.found && ok.token?.token === JWT && ok.modified instanceof Date);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
