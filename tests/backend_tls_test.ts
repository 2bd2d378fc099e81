/**
 * Mutual TLS to an upstream, against nginx with `ssl_verify_client on` and a private CA made with
 * openssl in the test: the gateway's pooled HTTP/1.1 client and the fetch path present the
 * client certificate and trust the CA (`ca_path`); without a certificate, with an expired one or
 * one of another CA, nginx refuses; trusting the wrong CA is a 502 naming the TLS failure.
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { makeTestCa, removeDir, requirePeer, startNginx, tempDir } from "./support/mod.ts";

Deno.test({
  name:
    "backend mutual TLS: nginx with ssl_verify_client; client certificate, private CA, refusals",
  ignore: !requirePeer("nginx", "nginx", "nginx-light") ||
    !requirePeer("openssl", "openssl", "openssl"),
  fn: async () => {
    const dir = await tempDir("gw-mtls-");
    const ca = await makeTestCa(dir, "hospital");
    const rogue = await makeTestCa(dir, "rogue");
    const server = await ca.server("fhir-server");
    const client = await ca.client("gateway", "edge-gateway");
    const expired = await ca.client("expired", "edge-gateway", { expired: true });
    const foreign = await rogue.client("foreign", "edge-gateway");
    const nginx = await startNginx({
      conf: `
server {
  listen 127.0.0.1:{{port}} ssl;
  ssl_certificate ${server.certPath};
  ssl_certificate_key ${server.keyPath};
  ssl_client_certificate ${ca.certPath};
  ssl_verify_client on;
  location / {
    default_type text/plain;
    return 200 "client=$ssl_client_s_dn verify=$ssl_client_verify\\n";
  }
}`,
    });
    const base = `https://localhost:${nginx.port}`;
    const backend = (name: string, options: string) => `
[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[backends.${name}]
service = "http"
retries = 0
[backends.${name}.options]
base_url = "${base}"
${options}
[pipelines.${name}]
endpoints = ["${name}"]
backends = ["${name}"]
`;
    const identity = (c: { certPath: string; keyPath: string }) =>
      `client_cert_path = "${c.certPath}"\nclient_key_path = "${c.keyPath}"`;
    const gw = await startTestGateway([
      backend("pooled", `ca_path = "${ca.certPath}"\n${identity(client)}`),
      backend(
        "fetch",
        `upstream_protocol = "auto"\nca_path = "${ca.certPath}"\n${identity(client)}`,
      ),
      backend("anonymous", `ca_path = "${ca.certPath}"`),
      backend("expired", `ca_path = "${ca.certPath}"\n${identity(expired)}`),
      backend("foreign", `ca_path = "${ca.certPath}"\n${identity(foreign)}`),
      backend("untrusted", `ca_path = "${rogue.certPath}"\n${identity(client)}`),
    ].join("\n"));
    try {
      const get = async (name: string) => {
        const res = await fetch(`${gw.url}/${name}/x`);
        return { status: res.status, text: await res.text() };
      };
      for (const name of ["pooled", "fetch"]) {
        const ok = await get(name);
        assertEquals(ok.status, 200, `${name}: ${ok.text}`);
        assertMatch(ok.text, /client=CN=edge-gateway verify=SUCCESS/);
      }
      // nginx answers 400 itself when the certificate is missing or does not verify.
      const anonymous = await get("anonymous");
      assertEquals(anonymous.status, 400);
      assertMatch(anonymous.text, /No required SSL certificate was sent/);
      for (const name of ["expired", "foreign"]) {
        const refused = await get(name);
        assertEquals(refused.status, 400, `${name}: ${refused.text}`);
        assertMatch(refused.text, /SSL certificate error/);
      }
      const untrusted = await get("untrusted");
      assertEquals(untrusted.status, 502, untrusted.text);
      const error = JSON.parse(untrusted.text).error;
      assertEquals(error.code, "backend_unavailable");
      assertMatch(error.message, /backend untrusted .*TLS handshake with localhost:\d+ failed/);
    } finally {
      await gw.stop();
      await nginx.stop();
      await removeDir(dir);
    }
  },
});
