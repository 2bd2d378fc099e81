/**
 * A private certificate authority for tests, made with Debian's `openssl`: it issues server
 * certificates (for localhost and 127.0.0.1) and client certificates (extended key usage
 * clientAuth), ECDSA P-256, valid for a day.
 */
import { runCommand } from "./process.ts";

/** A certificate and its key, as files and as PEM. */
export interface IssuedCert {
  certPath: string;
  keyPath: string;
  cert: string;
}

/** A CA that can issue certificates. */
export interface TestCa {
  certPath: string;
  /** A server certificate for `names` (default: localhost and 127.0.0.1). */
  server(name: string, names?: string[]): Promise<IssuedCert>;
  /** A client certificate with `cn` as its subject's common name (`expired`: ended at issue). */
  client(name: string, cn: string, options?: { expired?: boolean }): Promise<IssuedCert>;
}

async function openssl(args: string[]): Promise<void> {
  const r = await runCommand("openssl", args, { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** Creates a CA named `name` in `dir`. */
export async function makeTestCa(dir: string, name = "ca"): Promise<TestCa> {
  const caCert = `${dir}/${name}.pem`;
  const caKey = `${dir}/${name}-key.pem`;
  await openssl([
    "req",
    "-x509",
    ...EC,
    "-keyout",
    caKey,
    "-out",
    caCert,
    "-days",
    "1",
    "-subj",
    `/CN=${name} test CA`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const issue = async (
    file: string,
    cn: string,
    extensions: string,
    days = "1",
  ): Promise<IssuedCert> => {
    const certPath = `${dir}/${file}.pem`;
    const keyPath = `${dir}/${file}-key.pem`;
    const csr = `${dir}/${file}.csr`;
    const ext = `${dir}/${file}.ext`;
    await openssl(["req", ...EC, "-keyout", keyPath, "-out", csr, "-subj", `/CN=${cn}`]);
    await Deno.writeTextFile(ext, extensions);
    await openssl([
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      caCert,
      "-CAkey",
      caKey,
      "-CAcreateserial",
      "-out",
      certPath,
      "-days",
      days,
      "-extfile",
      ext,
    ]);
    return { certPath, keyPath, cert: await Deno.readTextFile(certPath) };
  };
  return {
    certPath: caCert,
    server: (file, names = ["localhost", "127.0.0.1"]) =>
      issue(
        file,
        names[0],
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n" +
          "extendedKeyUsage=serverAuth\nsubjectAltName=" +
          names.map((n) => /^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`).join(",") + "\n",
      ),
    client: (file, cn, options) =>
      issue(
        file,
        cn,
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n" +
          "extendedKeyUsage=clientAuth\n",
        // `-days 0` ends the certificate the second it starts.
        options?.expired ? "0" : "1",
      ),
  };
}
