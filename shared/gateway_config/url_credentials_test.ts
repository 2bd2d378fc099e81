import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { redactConfigText } from "./secrets.ts";
import {
  isSecretQueryName,
  redactUrlCredentials,
  redactUrlCredentialsDeep,
  urlCredentialPaths,
  urlCredentials,
} from "./url_credentials.ts";

Deno.test("urlCredentials: userinfo, with a password or a user alone, is a credential", () => {
  assert.deepEqual(urlCredentials("https://u:pw@h/"), [{ part: "userinfo" }]);
  assert.equal(redactUrlCredentials("https://u:pw@h/"), "https://<redacted>:<redacted>@h/");
  assert.equal(redactUrlCredentials("https://ghp_tok@h/x"), "https://<redacted>@h/x");
  assert.equal(
    redactUrlCredentials("https://k:s@s3.local"),
    "https://<redacted>:<redacted>@s3.local",
  );
  assert.equal(
    redactUrlCredentials("redis://:pw@cache:6379/0"),
    "redis://:<redacted>@cache:6379/0",
  );
  // An `@` in the path or the query is not userinfo.
  assert.deepEqual(urlCredentials("https://h/users/@me?mail=a@b.org"), []);
});

Deno.test("urlCredentials: each class of secret-looking query name, in any case; others stay", () => {
  const secret = [
    "access_token",
    "token",
    "id_token",
    "api_key",
    "apikey",
    "API-Key",
    "key",
    "subscription-key",
    "secret",
    "client_secret",
    "clientSecret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "sig",
    "signature",
    "X-Amz-Signature",
    "X-Amz-Credential",
    "X-Amz-Security-Token",
    "AWSAccessKeyId",
    "auth",
    "x_auth",
    "code",
    "jwt",
    "token:exact",
  ];
  for (const name of secret) assert.ok(isSecretQueryName(name), name);
  for (const name of ["_count", "author", "keyword", "X-Amz-Date", "state", "patient", "codes"]) {
    assert.ok(!isSecretQueryName(name), name);
  }
  assert.equal(
    redactUrlCredentials("https://h/fhir?_count=5&access_token=abc&X-Amz-Date=1&Sig=x#frag"),
    "https://h/fhir?_count=5&access_token=<redacted>&X-Amz-Date=1&Sig=<redacted>#frag",
  );
  assert.deepEqual(urlCredentials("https://h/?api_key=1&author=me&flag"), [
    { part: "query", name: "api_key" },
  ]);
  // A token in the fragment (OAuth implicit flow) too.
  assert.equal(
    redactUrlCredentials("https://app/cb#access_token=abc&state=1"),
    "https://app/cb#access_token=<redacted>&state=1",
  );
});

Deno.test("urlCredentials: ${VAR} references (and what is already redacted) stay as written", () => {
  for (
    const url of [
      "https://${FHIR_USER}:${FHIR_PASSWORD}@h/fhir",
      "https://h/fhir?access_token=${FHIR_TOKEN}&_count=5",
      "https://%24%7BUSER%7D@h/?token=%24%7BTOKEN%7D",
      "https://<redacted>:<redacted>@h/?token=<redacted>",
      "https://h/?token=",
    ]
  ) {
    assert.deepEqual(urlCredentials(url), [], url);
    assert.equal(redactUrlCredentials(url), url);
  }
  // A literal user beside a referenced password is still a credential; the reference stays.
  assert.equal(redactUrlCredentials("https://admin:${PW}@h/"), "https://<redacted>:${PW}@h/");
});

Deno.test("urlCredentials: percent-encoded forms, IPv6 hosts, paths with a query, URLs in text", () => {
  assert.equal(
    redactUrlCredentials("https://user%40example.org:p%40ss@h/?access%5Ftoken=abc"),
    "https://<redacted>:<redacted>@h/?access%5Ftoken=<redacted>",
  );
  assert.deepEqual(urlCredentials("https://h/?access%5Ftoken=abc"), [
    { part: "query", name: "access_token" },
  ]);
  assert.equal(
    redactUrlCredentials("https://u:p@[2001:db8::1]:8443/x?token=t"),
    "https://<redacted>:<redacted>@[2001:db8::1]:8443/x?token=<redacted>",
  );
  assert.deepEqual(urlCredentials("http://[::1]:9000/bucket"), []);
  // An HTTP/3 base_path is a path, and may carry a query.
  assert.equal(redactUrlCredentials("/v1?api-key=zz&x=1"), "/v1?api-key=<redacted>&x=1");
  assert.equal(redactUrlCredentials("/var/lib/gateway/data"), "/var/lib/gateway/data");
  assert.equal(
    redactUrlCredentials("upstream https://u:pw@h/x failed; retry http://h?sig=abc"),
    "upstream https://<redacted>:<redacted>@h/x failed; retry http://h?sig=<redacted>",
  );
});

Deno.test("urlCredentialPaths and redactUrlCredentialsDeep walk every table and array", () => {
  const tree = {
    backends: {
      fhir: { options: { base_url: "https://h/fhir?access_token=abc", timeout_secs: 5 } },
    },
    targets: { a: { url: "https://u:pw@h/" } },
    list: ["plain", { nested: ["https://k:s@s3.local"] }],
    checks: [{ name: "n", message: "GET https://h/?token=t refused" }],
  };
  assert.deepEqual(urlCredentialPaths(tree).map((p) => p.path), [
    "backends.fhir.options.base_url",
    "targets.a.url",
    "list[1].nested[0]",
    "checks[0].message",
  ]);
  const { value, paths } = redactUrlCredentialsDeep(tree);
  assert.equal(paths.length, 4);
  const text = JSON.stringify(value);
  for (const leak of ["abc", "pw@", "k:s@", "token=t "]) assert.ok(!text.includes(leak), leak);
  assert.equal(value.backends.fhir.options.timeout_secs, 5);
  assert.equal(tree.targets.a.url, "https://u:pw@h/", "the input is not changed");
});

Deno.test("redactConfigText: URL credentials in any string value of the file, with their paths", () => {
  const text = `# an operator's file
[backends.fhir]
service = "fhir"
[backends.fhir.options]
base_url = "https://h/fhir?access_token=abc" # keep
[targets.t]
url = 'https://u:pw@h/'
[backends.s3.options]
endpoint = "https://k:s@s3.local"
future_option = ["x", "https://u\\u0040corp:pw2@h/"]
jwks = """
https://h/jwks?key=k3y"""
fine = "https://\${U}:\${P}@h/?token=\${T}"
`;
  const { text: out, redactions } = redactConfigText(text);
  for (const leak of ["abc", "u:pw@", "k:s@", "pw2", "k3y"]) assert.ok(!out.includes(leak), leak);
  assert.deepEqual(redactions.map((r) => [r.path, r.reason]), [
    ["backends.fhir.options.base_url", "url"],
    ["targets.t.url", "url"],
    ["backends.s3.options.endpoint", "url"],
    ["backends.s3.options.future_option[1]", "url"],
    ["backends.s3.options.jwks", "url"],
  ]);
  assert.match(out, /base_url = "https:\/\/h\/fhir\?access_token=<redacted>" # keep/);
  assert.match(out, /fine = "https:\/\/\$\{U\}:\$\{P\}@h\/\?token=\$\{T\}"/);
  // Still TOML, and a second pass finds nothing.
  const doc = parse(out) as { backends: { s3: { options: { future_option: string[] } } } };
  assert.equal(doc.backends.s3.options.future_option[1], "https://<redacted>:<redacted>@h/");
  assert.deepEqual(redactConfigText(out).redactions, []);
});
