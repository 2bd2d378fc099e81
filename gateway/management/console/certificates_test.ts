import assert from "node:assert/strict";
import { certificateSettings, configuredCertificates } from "./certificates.ts";

async function openssl(args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, stderr: "piped", stdout: "null" })
    .output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

Deno.test("certificate settings: every *cert_path, *ca_path and *ca_cert_path, nested", () => {
  const settings = certificateSettings({
    network: { main: { tls_cert_path: "a.pem", tls_key_path: "a-key.pem" } },
    backends: { pacs: { options: { ca_cert_path: "ca.pem", client_cert_path: "c.pem" } } },
    endpoints: { mllp: { options: { tls_client_ca_path: "clients.pem" } } },
    management: { tls_cert_path: "m.pem" },
  });
  assert.deepEqual(settings, [
    ["network.main.tls_cert_path", "a.pem"],
    ["backends.pacs.options.ca_cert_path", "ca.pem"],
    ["backends.pacs.options.client_cert_path", "c.pem"],
    ["endpoints.mllp.options.tls_client_ca_path", "clients.pem"],
    ["management.tls_cert_path", "m.pem"],
  ]);
});

// openssl (Debian) makes the certificates, as tests/support/test_ca.ts does for the other tests.
Deno.test({
  name: "configured certificates: expiry states, chains, relative paths and unreadable files",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "console-certs-" });
    try {
      const make = (name: string, days: number) =>
        openssl([
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          `${dir}/${name}-key.pem`,
          "-out",
          `${dir}/${name}.pem`,
          "-days",
          String(days),
          "-subj",
          `/CN=${name}`,
        ]);
      await make("long", 400);
      await make("soon", 10);
      // A chain file: two certificates, the leaf first.
      await Deno.writeTextFile(
        `${dir}/chain.pem`,
        (await Deno.readTextFile(`${dir}/soon.pem`)) + (await Deno.readTextFile(`${dir}/long.pem`)),
      );
      await Deno.writeTextFile(`${dir}/empty.pem`, "no certificate here\n");
      const now = Date.now();
      const { certificates, problems } = await configuredCertificates(
        {
          network: {
            a: { tls_cert_path: "long.pem" },
            b: { tls_cert_path: `${dir}/chain.pem` },
            c: { tls_cert_path: "missing.pem" },
            d: { tls_cert_path: "empty.pem" },
          },
        },
        dir,
        now,
      );
      const view = certificates.map((c) => [c.setting, c.subject, c.state, c.index]);
      assert.deepEqual(view, [
        ["network.b.tls_cert_path", "CN=soon", "expiring", 0],
        ["network.a.tls_cert_path", "CN=long", "valid", 0],
        ["network.b.tls_cert_path", "CN=long", "valid", 1],
      ]);
      assert.equal(certificates[0].days_left, 9);
      assert.deepEqual(problems.map((p) => p.setting), [
        "network.c.tls_cert_path",
        "network.d.tls_cert_path",
      ]);
      assert.match(problems[1].message, /no PEM certificate/);
      // Expired: seen from a year later.
      const later = await configuredCertificates(
        { network: { a: { tls_cert_path: "soon.pem" } } },
        dir,
        now + 365 * 86_400_000,
      );
      assert.equal(later.certificates[0].state, "expired");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
