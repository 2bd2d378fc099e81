import assert from "node:assert/strict";
import {
  parseConfigKey,
  readConfigFile,
  resolveConfigValue,
  validateApiUrl,
  writeConfigFile,
} from "./config.ts";
import { envOf } from "./env.ts";
import { CliError, EXIT } from "./errors.ts";

Deno.test("config: api-url must be http(s); trailing slashes go", () => {
  assert.equal(validateApiUrl("https://cloud.example.com/"), "https://cloud.example.com");
  assert.equal(validateApiUrl("HTTP://Cloud.Example:8000"), "http://cloud.example:8000");
  assert.equal(validateApiUrl("https://x.example/base/"), "https://x.example/base");
  for (const bad of ["ftp://x", "cloud.example", "", "javascript:alert(1)", "http//x"]) {
    assert.throws(
      () => validateApiUrl(bad),
      (e: unknown) =>
        e instanceof CliError && e.exitCode === EXIT.usage &&
        /must start with http:\/\/ or https:\/\//.test(e.message),
      bad,
    );
  }
  assert.throws(() => validateApiUrl("https://u:p@x.example"), /credentials/);
  assert.throws(() => validateApiUrl("https://x.example/?a=1"), /query/);
  assert.throws(() => parseConfigKey("colour"), /unknown configuration key 'colour'/);
  assert.equal(parseConfigKey("api-url"), "api-url");
});

Deno.test("config: file > GATEWAY_API_URL > default; each source is validated", () => {
  const env = envOf({ GATEWAY_API_URL: "https://env.example/" });
  assert.deepEqual(resolveConfigValue("api-url", { "api-url": "https://file.example" }, env), {
    key: "api-url",
    value: "https://file.example",
    source: "file",
  });
  assert.deepEqual(resolveConfigValue("api-url", {}, env), {
    key: "api-url",
    value: "https://env.example",
    source: "env",
  });
  assert.deepEqual(resolveConfigValue("api-url", {}, envOf({ GATEWAY_API_URL: "" })), {
    key: "api-url",
    value: "http://localhost:8000",
    source: "default",
  });
  assert.throws(
    () => resolveConfigValue("api-url", { "api-url": "ftp://x" }, env, "/h/config.json"),
    /api-url in \/h\/config\.json must start with http/,
  );
  assert.throws(
    () => resolveConfigValue("api-url", {}, envOf({ GATEWAY_API_URL: "x" })),
    /GATEWAY_API_URL must start/,
  );
});

Deno.test("config: the file keeps only known keys; bad JSON is a clear error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/config.json`;
    assert.deepEqual(await readConfigFile(path), {});
    await Deno.writeTextFile(path, JSON.stringify({ "api-url": "http://a", other: 1 }));
    assert.deepEqual(await readConfigFile(path), { "api-url": "http://a" });
    await writeConfigFile(path, { "api-url": "http://b" });
    assert.equal(await Deno.readTextFile(path), '{\n  "api-url": "http://b"\n}\n');
    await Deno.writeTextFile(path, "{nope");
    await assert.rejects(() => readConfigFile(path), /config\.json is not valid JSON/);
    await Deno.writeTextFile(path, "[1]");
    await assert.rejects(() => readConfigFile(path), /must hold a JSON object/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
