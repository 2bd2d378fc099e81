/**
 * Mutual TLS to an upstream, against nginx with `ssl_verify_client on` and a private CA made with
 * openssl in the test: the gateway's pooled HTTP/1.1 client and the fetch path present the
 * client certificate and trust the CA (`ca_path`); without a certificate or with one of another CA
 * nginx refuses, an expired one is refused at load; trusting the wrong CA is a 502 naming the TLS
 * failure; a server reached by address is checked against `server_name`. And the
 * dicomweb backend with Basic credentials to Orthanc's DICOMweb behind nginx's `auth_basic`.
 */
import { assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import {
  makeTestCa,
  removeDir,
  requirePeer,
  runCommand,
  startNginx,
  tempDir,
  withEnv,
} from "./support/mod.ts";
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { requireDicomwebPlugin, startOrthanc } from "../fixtures/dicom/peers.ts";

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
      const refused = await get("foreign");
      assertEquals(refused.status, 400, refused.text);
      assertMatch(refused.text, /SSL certificate error/);
      const untrusted = await get("untrusted");
      assertEquals(untrusted.status, 502, untrusted.text);
      const error = JSON.parse(untrusted.text).error;
      assertEquals(error.code, "backend_unavailable");
      assertMatch(error.message, /backend untrusted .*TLS handshake with localhost:\d+ failed/);
      // An expired client certificate is a configuration error naming the key, not a 400 later.
      let failed = "";
      await startTestGateway(backend("expired", `ca_path = "${ca.certPath}"\n${identity(expired)}`))
        .then((g) => g.stop(), (err) => failed = (err as Error).message);
      assertMatch(
        failed,
        /backends\.expired: options\.client_cert_path: the certificate expired on/,
      );
    } finally {
      await gw.stop();
      await nginx.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "backend server_name: an upstream reached by address, its certificate checked for its name",
  ignore: !requirePeer("nginx", "nginx", "nginx-light") ||
    !requirePeer("openssl", "openssl", "openssl"),
  fn: async () => {
    const dir = await tempDir("gw-sni-");
    const ca = await makeTestCa(dir, "hospital");
    const server = await ca.server("fhir", ["fhir.hospital.internal"]);
    const nginx = await startNginx({
      conf: `
server {
  listen 127.0.0.1:{{port}} ssl;
  ssl_certificate ${server.certPath};
  ssl_certificate_key ${server.keyPath};
  location / {
    default_type text/plain;
    return 200 "sni=$ssl_server_name\n";
  }
}`,
    });
    const backend = (name: string, extra: string) => `
[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[backends.${name}]
service = "http"
retries = 0
[backends.${name}.options]
base_url = "https://127.0.0.1:${nginx.port}"
ca_path = "${ca.certPath}"
${extra}
[pipelines.${name}]
endpoints = ["${name}"]
backends = ["${name}"]
`;
    const gw = await startTestGateway(
      backend("named", 'server_name = "fhir.hospital.internal"') + backend("unnamed", ""),
    );
    try {
      const named = await fetch(`${gw.url}/named/x`);
      assertEquals(named.status, 200);
      assertEquals(await named.text(), "sni=fhir.hospital.internal\n");
      const unnamed = await fetch(`${gw.url}/unnamed/x`);
      const body = await unnamed.json();
      assertEquals([unnamed.status, body.error.code], [502, "backend_unavailable"]);
      assertMatch(body.error.message, /TLS handshake with 127\.0\.0\.1:\d+ failed/);
    } finally {
      await gw.stop();
      await nginx.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "dicomweb backend with basic auth: Orthanc's DICOMweb behind nginx auth_basic (htpasswd)",
  ignore: !requirePeer("nginx", "nginx", "nginx-light") ||
    !requirePeer("Orthanc", "Orthanc", "orthanc") ||
    !requirePeer("htpasswd", "htpasswd", "apache2-utils") || !requireDicomwebPlugin(),
  fn: async () => {
    const dir = await tempDir("gw-pacs-web-");
    const [instance] = await generateInstances(`${dir}/in`, { patientPrefix: "BASICWEB" });
    const orthanc = await startOrthanc({ dicomweb: true });
    const made = await runCommand("htpasswd", [
      "-bcB",
      `${dir}/htpasswd`,
      "gateway",
      "pacs-pässword",
    ]);
    assertEquals(made.code, 0, made.stderr);
    const nginx = await startNginx({
      conf: `
server {
  listen 127.0.0.1:{{port}};
  location / {
    auth_basic "pacs";
    auth_basic_user_file ${dir}/htpasswd;
    proxy_pass ${orthanc.url};
  }
}`,
    });
    const gw = await withEnv({ PACS_WEB_PASSWORD: "pacs-pässword" }, () =>
      startTestGateway(`
[endpoints.web]
service = "dicomweb"
[endpoints.web.options]
path_prefix = "/web"
[backends.pacs]
service = "dicomweb"
[backends.pacs.options]
base_url = "${nginx.url}/dicom-web"
[backends.pacs.options.auth]
type = "basic"
username = "gateway"
password = "\${PACS_WEB_PASSWORD}"
[pipelines.web]
endpoints = ["web"]
backends = ["pacs"]
`));
    try {
      const direct = await fetch(`${nginx.url}/dicom-web/studies`);
      assertEquals(direct.status, 401, "nginx asks for credentials");
      await direct.body?.cancel();
      const stow = await fetch(`${gw.url}/web/studies`, {
        method: "POST",
        headers: { "content-type": "application/dicom" },
        body: await Deno.readFile(instance.path),
      });
      assertEquals(stow.status, 200, await stow.clone().text());
      await stow.body?.cancel();
      const qido = await fetch(`${gw.url}/web/studies?PatientID=${instance.patientId}`, {
        headers: { accept: "application/dicom+json" },
      });
      const found = await qido.json();
      assertEquals(qido.status, 200, JSON.stringify(found));
      assertEquals(found.map((s: Record<string, { Value: string[] }>) => s["0020000D"].Value[0]), [
        instance.studyUid,
      ]);
    } finally {
      await gw.stop();
      await nginx.stop();
      await orthanc.stop();
      await removeDir(dir);
    }
  },
});
