/** Test certificates made with the system's `openssl` (Debian package openssl). */

/** Paths of a self-signed certificate for localhost / 127.0.0.1 and its key. */
export interface TestCert {
  certPath: string;
  keyPath: string;
  cert: string;
}

/** Create a self-signed ECDSA P-256 certificate (1 day) for localhost and 127.0.0.1 in `dir`. */
export async function makeSelfSignedCert(dir: string, name = "server"): Promise<TestCert> {
  const certPath = `${dir}/${name}.crt`;
  const keyPath = `${dir}/${name}.key`;
  const out = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`openssl failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return { certPath, keyPath, cert: await Deno.readTextFile(certPath) };
}
