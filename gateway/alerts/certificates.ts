/**
 * The certificates of a configuration and when they expire: every PEM file the configuration
 * serves or presents or trusts (keys ending in `cert_path` or `ca_path`: listeners, the
 * management API, MLLP and DIMSE TLS, backend client certificates and CAs, the SMTP CA), plus a
 * rule's own `paths`. Parsed with `node:crypto`'s X509Certificate; a bundle counts by its
 * earliest expiry. Files are read bounded.
 */
import { X509Certificate } from "node:crypto";
import { type GatewayConfig, visitFields } from "../../shared/gateway_config/mod.ts";

/** Largest certificate file read. */
const MAX_PEM_BYTES = 1024 * 1024;
/** Certificates read from one file. */
const MAX_CERTS_PER_FILE = 100;

/** One file's expiry, or why it could not be read. */
export interface CertificateExpiry {
  path: string;
  /** Earliest `notAfter` of the certificates in the file (ms since the epoch). */
  notAfter?: number;
  /** The subject of that certificate (its CN or the whole subject). */
  subject?: string;
  /** Why the file gave no certificate. */
  error?: string;
}

/** Paths of the certificate files `config` names (absolute once loaded from a file). */
export function configCertificatePaths(config: GatewayConfig): string[] {
  const paths = new Set<string>();
  visitFields(config as unknown as Record<string, unknown>, (f) => {
    if (f.spec.path !== "config" || typeof f.value !== "string" || f.value === "") return;
    if (/(cert_path|ca_path)$/.test(f.key)) paths.add(f.value);
  });
  return [...paths].sort();
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The earliest expiry of the certificates in `path`. */
export async function readExpiry(path: string): Promise<CertificateExpiry> {
  let text: string;
  try {
    const file = await Deno.open(path, { read: true });
    try {
      const info = await file.stat();
      if (info.size > MAX_PEM_BYTES) return { path, error: `larger than ${MAX_PEM_BYTES} bytes` };
      const buf = new Uint8Array(info.size);
      let read = 0;
      while (read < buf.length) {
        const n = await file.read(buf.subarray(read));
        if (n === null) break;
        read += n;
      }
      text = new TextDecoder().decode(buf.subarray(0, read));
    } finally {
      file.close();
    }
  } catch (err) {
    return { path, error: err instanceof Deno.errors.NotFound ? "not found" : "cannot be read" };
  }
  const blocks = (text.match(PEM_CERT) ?? []).slice(0, MAX_CERTS_PER_FILE);
  if (blocks.length === 0) return { path, error: "holds no PEM certificate" };
  let earliest: CertificateExpiry | undefined;
  for (const block of blocks) {
    try {
      const cert = new X509Certificate(block);
      const notAfter = Date.parse(cert.validTo);
      if (!Number.isFinite(notAfter)) continue;
      if (!earliest || notAfter < earliest.notAfter!) {
        const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
        earliest = {
          path,
          notAfter,
          subject: (cn ?? cert.subject.replace(/\n/g, ", ")).slice(0, 200),
        };
      }
    } catch {
      // one malformed block of a bundle: the others still count
    }
  }
  return earliest ?? { path, error: "holds no readable certificate" };
}
