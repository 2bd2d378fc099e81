import assert from "node:assert/strict";
import { validateConfigText } from "./text.ts";
import { writeConfigToml } from "./writer.ts";
import { registerComponentType, unregisterComponentType } from "./registry.ts";
import type { GatewayConfig } from "./types.ts";

function validated(text: string): GatewayConfig {
  const result = validateConfigText(text, "in.toml");
  assert.deepEqual(result.problems, []);
  return result.config!;
}

/** write -> parse -> validate gives back an equal config. */
function assertRoundTrip(config: GatewayConfig): string {
  const text = writeConfigToml(config);
  const again = validateConfigText(text, "out.toml");
  assert.deepEqual(again.problems, [], text);
  assert.deepEqual(again.config, config, text);
  assert.equal(writeConfigToml(again.config!), text, "writing is stable");
  return text;
}

const fixture = (name: string) =>
  Deno.readTextFile(new URL(`../../fixtures/configs/${name}`, import.meta.url));

Deno.test("writeConfigToml: minimal config is short, ordered and leaves defaults out", () => {
  const text = assertRoundTrip(validated(`
[pipelines.api]
backends = ["up"]
endpoints = ["api"]
[backends.up]
options = { base_url = "http://127.0.0.1:8081" }
service = "http"
timeout_secs = 30
[endpoints.api]
service = "http"
options = { path_prefix = "/api/" }
[logging]
level = "info"
`));
  assert.equal(
    text,
    `# Gateway configuration

[endpoints.api]
service = "http"

[endpoints.api.options]
path_prefix = "/api"

[backends.up]
service = "http"

[backends.up.options]
base_url = "http://127.0.0.1:8081"

[pipelines.api]
endpoints = [ "api" ]
backends = [ "up" ]
`,
  );
});

Deno.test("writeConfigToml: the fixtures round-trip", async () => {
  for (const name of ["minimal.toml", "full.toml", "multi/gateway.toml"]) {
    assertRoundTrip(validated(await fixture(name)));
  }
});

Deno.test("writeConfigToml: networks: implicit default, none, and http3 overrides round-trip", () => {
  const implicit = assertRoundTrip(validated(""));
  assert.equal(implicit, "# Gateway configuration\n");
  const none = assertRoundTrip(validated("[network]"));
  assert.equal(none, "# Gateway configuration\n\n[network]\n");
  assertRoundTrip(validated('[network.default]\nbind = "127.0.0.1"'));
  assertRoundTrip(validated("[network.other]"));
  const text = assertRoundTrip(validated(`
[network.edge]
port = 443
tls_cert_path = "c.pem"
tls_key_path = "k.pem"
[network.edge.http3]
[network.quic]
port = 8443
http3 = { bind = "::", port = 4433, cert_path = "q.pem", key_path = "qk.pem" }
`));
  assert.match(text, /\[network\.edge\.http3\]\n\n\[network\.quic\]/);
});

Deno.test("writeConfigToml: awkward strings, floats, match keys and open middleware types", () => {
  registerComponentType({
    kind: "middleware",
    name: "x_open",
    doc: "test type without an option schema",
  });
  try {
    assertRoundTrip(validated(`
transforms_path = "C:\\\\transforms \\"new\\""
[cloud]
url = "https://cloud.example.com/a?b=c"
[backends.api]
service = "http"
timeout_secs = 2.5
cooldown_secs = 0.25
options = { base_url = "http://x" }
match = { "x-tenant id" = "ü\\u007f\\n", plain = "" }
[middleware.m]
type = "x_open"
options = { anything = [1, "two", { three = 3.5 }], nested = { deep = true } }
`));
  } finally {
    unregisterComponentType("middleware", "x_open");
  }
});

Deno.test("writeConfigToml: selfContained leaves pipelines_path out", () => {
  const config = validated('pipelines_path = "pipelines"');
  assert.match(writeConfigToml(config), /^pipelines_path = "pipelines"$/m);
  assert.doesNotMatch(writeConfigToml(config, { selfContained: true }), /pipelines_path/);
});
