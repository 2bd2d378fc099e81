/**
 * The certificates the running configuration names (listeners' `tls_cert_path`, CAs, client
 * certificates of backends, the management listener's own), read and parsed with
 * `node:crypto`'s `X509Certificate` for the health page: subject, issuer and expiry.
 */
import { X509Certificate } from "node:crypto";
import { isAbsolute, resolve } from "node:path";

/** One certificate found in a configured file. */
export interface CertificateInfo {
  /** Where the configuration names it (`network.main.tls_cert_path`). */
  setting: string;
  file: string;
  subject: string;
  issuer: string;
  /** ISO 8601. */
  not_before: string;
  /** ISO 8601. */
  not_after: string;
  /** Whole days until it expires (negative: expired). */
  days_left: number;
  /** `expired`, `expiring` (within `warnDays`) or `valid`. */
  state: "expired" | "expiring" | "valid";
  /** Position in its file (a chain: 0 is the leaf). */
  index: number;
}

/** A configured certificate file that could not be read or parsed. */
export interface CertificateProblem {
  setting: string;
  file: string;
  message: string;
}

/** Keys whose values name certificate files (or hold PEM text). */
const CERT_KEY = /(^|_)(cert|ca|ca_cert|client_cert|tls_cert|tls_client_ca)_path$/;

/** Largest certificate file read, bytes. */
const MAX_FILE_BYTES = 1024 * 1024;
/** Most certificates read from one file, and settings walked. */
const MAX_PER_FILE = 50;
const MAX_SETTINGS = 500;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The settings of `config` that name certificate files: `[setting, value]`. */
export function certificateSettings(config: unknown): [string, string][] {
  const out: [string, string][] = [];
  const walk = (value: unknown, path: string, depth: number) => {
    if (out.length >= MAX_SETTINGS || depth > 12 || value === null) return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${path}[${i}]`, depth + 1));
      return;
    }
    if (typeof value !== "object") return;
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const at = path ? `${path}.${key}` : key;
      if (typeof v === "string" && CERT_KEY.test(key)) out.push([at, v]);
      else walk(v, at, depth + 1);
    }
  };
  walk(config, "", 0);
  return out;
}

/** Parses the PEM certificates in `text`. */
export function parseCertificates(
  text: string,
  setting: string,
  file: string,
  now: number,
  warnDays: number,
): CertificateInfo[] {
  const blocks = text.match(PEM_BLOCK) ?? [];
  return blocks.slice(0, MAX_PER_FILE).map((pem, index) => {
    const cert = new X509Certificate(pem);
    const notAfter = new Date(cert.validTo).getTime();
    const days = Math.floor((notAfter - now) / 86_400_000);
    return {
      setting,
      file,
      subject: cert.subject.replace(/\n/g, ", "),
      issuer: cert.issuer.replace(/\n/g, ", "),
      not_before: new Date(cert.validFrom).toISOString(),
      not_after: new Date(notAfter).toISOString(),
      days_left: days,
      state: notAfter <= now ? "expired" : days < warnDays ? "expiring" : "valid",
      index,
    };
  });
}

/**
 * Every certificate of the configuration's certificate settings, relative paths resolved
 * against `baseDir`; unreadable files and files without a certificate become problems.
 */
export async function configuredCertificates(
  config: unknown,
  baseDir: string,
  now: number,
  warnDays = 30,
): Promise<{ certificates: CertificateInfo[]; problems: CertificateProblem[] }> {
  const certificates: CertificateInfo[] = [];
  const problems: CertificateProblem[] = [];
  const seen = new Set<string>();
  for (const [setting, value] of certificateSettings(config)) {
    const inline = value.includes("-----BEGIN");
    const file = inline ? "(inline PEM)" : isAbsolute(value) ? value : resolve(baseDir, value);
    if (!inline && seen.has(`${setting}\0${file}`)) continue;
    seen.add(`${setting}\0${file}`);
    try {
      let text = value;
      if (!inline) {
        const stat = await Deno.stat(file);
        if (stat.size > MAX_FILE_BYTES) {
          throw new Error(`larger than ${MAX_FILE_BYTES} bytes: not a certificate file`);
        }
        text = await Deno.readTextFile(file);
      }
      const found = parseCertificates(text, setting, file, now, warnDays);
      if (found.length === 0) throw new Error("no PEM certificate in it");
      certificates.push(...found);
    } catch (err) {
      problems.push({ setting, file, message: (err as Error).message });
    }
  }
  certificates.sort((a, b) => a.not_after.localeCompare(b.not_after));
  return { certificates, problems };
}
