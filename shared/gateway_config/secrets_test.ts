import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { literalSecretPaths, redactSecrets } from "./secrets.ts";

const TEXT = `# storage with a literal secret
[backends.s3]
service = "storage"
[backends.s3.options]
root = "s3://bucket/p"
region = "eu-central-1"
access_key_id = "\${S3_KEY_ID}"
secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" # keep this comment

[endpoints.jmix]
service = "jmix"
[endpoints.jmix.options]
path_prefix = "/jmix"
signing_key = """
-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----
"""
`;

Deno.test("redactSecrets: literal credentials become <redacted>; references, comments and the rest stay", () => {
  const out = redactSecrets(TEXT);
  assert.ok(!out.includes("wJalrXUtnFEMI"), out);
  assert.ok(!out.includes("MC4CAQAwBQYDK2VwBCIE"), out);
  assert.match(out, /secret_access_key = "<redacted>" # keep this comment/);
  assert.match(out, /signing_key = """<redacted>"""/);
  assert.match(out, /access_key_id = "\$\{S3_KEY_ID\}"/);
  assert.match(out, /region = "eu-central-1"/);
  assert.deepEqual(literalSecretPaths(parse(out) as Record<string, unknown>), []);
  // A file that does not parse is still redacted by key name.
  const broken = redactSecrets('[backends.s3.options\nsecret_access_key = "abc123"\n');
  assert.ok(!broken.includes("abc123"), broken);
});

Deno.test("literalSecretPaths: names literal secrets only", () => {
  assert.deepEqual(literalSecretPaths(parse(TEXT) as Record<string, unknown>), [
    "endpoints.jmix.options.signing_key",
    "backends.s3.options.secret_access_key",
  ]);
});
