/** JWKS files: only public keys; anything else refuses the configuration with the reason. */
import { exportJWK, generateKeyPair } from "jose";
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { validateConfigText } from "../../../shared/gateway_config/mod.ts";
import { localKeys } from "./jwks.ts";

Deno.test("localKeys: public keys only, a key set with keys, JSON", async () => {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  localKeys(JSON.stringify({ keys: [await exportJWK(publicKey)] }), "keys.json");
  const refusals: [string, RegExp][] = [
    [JSON.stringify({ keys: [await exportJWK(privateKey)] }), /key 0 is a private key/],
    [JSON.stringify({ keys: [{ kty: "oct", k: "c2VjcmV0" }] }), /symmetric \(oct\) key/],
    [JSON.stringify({ keys: [] }), /at least one key/],
    ["{nope", /keys.json: not JSON/],
  ];
  for (const [text, message] of refusals) {
    await assertRejects(() => localKeys(text, "keys.json"), message);
  }
});

Deno.test("jwt_auth options: exactly one key source, asymmetric algorithms only", () => {
  const config = (options: string) =>
    validateConfigText(
      `[middleware.auth]\ntype = "jwt_auth"\n[middleware.auth.options]\nissuer = "https://i"\n` +
        `audience = ["a"]\n${options}`,
      "gateway.toml",
    );
  const messages = (options: string) => {
    return config(options).problems.map((p) => `${p.path}: ${p.message}`);
  };
  assertEquals(messages('jwks_url = "https://i/jwks"'), []);
  assertEquals(messages(""), [
    "middleware.auth.options.jwks_url: set exactly one of `jwks_url` and `jwks_path`",
  ]);
  assertEquals(messages('jwks_url = "https://i/jwks"\njwks_path = "k.json"').length, 1);
  const hs = messages('jwks_url = "https://i/jwks"\nalgorithms = ["HS256"]');
  assertEquals(hs.length, 1);
  assertEquals(hs[0].startsWith("middleware.auth.options.algorithms[0]: "), true);
  assertEquals(messages('jwks_url = "https://i/jwks"\nalgorithms = ["none"]').length, 1);
});
