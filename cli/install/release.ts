/**
 * Where releases are and how they are named. Under a base URL (`GWCLI_RELEASE_URL`, default
 * {@link DEFAULT_RELEASE_URL}), laid out like GitHub releases so both a GitHub project and any
 * static file server work:
 *
 *   <base>/latest/download/latest.json                     {"version": "0.12.0"}
 *   <base>/latest/download/latest.json.sig                 Ed25519 signature of latest.json
 *   <base>/download/v<version>/gateway-<version>-<os>-<arch>.tar.gz   (Linux, macOS)
 *   <base>/download/v<version>/gateway-<version>-<os>-<arch>.zip      (Windows)
 *   <base>/download/v<version>/gwcli-<version>-<os>-<arch>.tar.gz|.zip (gwcli self-update)
 *   <base>/download/v<version>/SHA256SUMS                  `sha256sum` output of the archives
 *   <base>/download/v<version>/SHA256SUMS.sig              Ed25519 signature of SHA256SUMS
 *
 * `latest.json` and `SHA256SUMS` are believed only when their signatures verify with a key gwcli
 * trusts: the publisher's keys built in ({@link RELEASE_PUBLIC_KEYS}) and those of
 * `GWCLI_RELEASE_PUBLIC_KEY` (comma-separated, for a mirror that signs its own builds). The
 * version of `SHA256SUMS` is bound by the archive names it lists (`gateway-<version>-…`), looked
 * up by the version asked for.
 */
import { CliError, usageError } from "../errors.ts";
import {
  INDEX_FILE,
  INDEX_SIGNATURE_FILE,
  releaseKeyProblem,
  SIGNATURE_FILE,
  verifyRelease,
} from "../../shared/mod.ts";
import type { Env } from "../env.ts";
import { apiErrorOf, describeApiError, type HttpClient } from "../http.ts";
import type { ReleasePlatform, ReleaseProgram } from "./platform.ts";

/** Environment variable of the release base URL. */
export const RELEASE_URL_ENV = "GWCLI_RELEASE_URL";
/** Environment variable of extra trusted release keys (base64 Ed25519, comma-separated). */
export const RELEASE_KEY_ENV = "GWCLI_RELEASE_PUBLIC_KEY";
/**
 * The publisher's release signing keys. Empty until the project publishes its first signed
 * release: until then only keys given in `GWCLI_RELEASE_PUBLIC_KEY` are trusted, and without one
 * gwcli installs nothing (an unsigned checksum file proves nothing about who built the archive).
 */
export const RELEASE_PUBLIC_KEYS: readonly string[] = [];
/** Where the project publishes gateway releases. */
export const DEFAULT_RELEASE_URL = "https://github.com/healthcare-gateway/gateway/releases";

const VERSION = /^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$/;

/** The release base URL, without a trailing slash. */
export function releaseBaseUrl(env: Env): string {
  const value = env(RELEASE_URL_ENV)?.trim() || DEFAULT_RELEASE_URL;
  if (!/^https?:\/\//i.test(value)) {
    throw usageError(
      `${RELEASE_URL_ENV} must start with http:// or https:// (got ${JSON.stringify(value)})`,
    );
  }
  return value.replace(/\/+$/, "");
}

/** `v0.12.0` -> `0.12.0`; `latest` stays; anything else is a usage error. */
export function parseVersion(text: string): string {
  const value = text.trim();
  if (value === "latest") return value;
  const m = VERSION.exec(value);
  if (!m) {
    throw usageError(
      `invalid version ${JSON.stringify(text)}: use latest or a release such as 0.12.0`,
    );
  }
  return m[1];
}

/** The URLs of one release build. */
export interface ReleaseFiles {
  archiveName: string;
  archiveUrl: string;
  checksumsUrl: string;
  signatureUrl: string;
}

/** The files of `program`'s `version` for `platform` under `base`. */
export function releaseFiles(
  base: string,
  version: string,
  platform: ReleasePlatform,
  program: ReleaseProgram = "gateway",
): ReleaseFiles {
  const archiveName = `${program}-${version}-${platform.os}-${platform.arch}.${platform.archive}`;
  const dir = `${base}/download/v${version}`;
  return {
    archiveName,
    archiveUrl: `${dir}/${archiveName}`,
    checksumsUrl: `${dir}/SHA256SUMS`,
    signatureUrl: `${dir}/${SIGNATURE_FILE}`,
  };
}

/** The release keys gwcli trusts: built in, plus `GWCLI_RELEASE_PUBLIC_KEY`. */
export function trustedReleaseKeys(env: Env): string[] {
  const extra = (env(RELEASE_KEY_ENV) ?? "").split(",").map((k) => k.trim()).filter(Boolean);
  for (const key of extra) {
    const problem = releaseKeyProblem(key);
    if (problem) throw usageError(`${RELEASE_KEY_ENV}: ${problem}`);
  }
  return [...RELEASE_PUBLIC_KEYS, ...extra];
}

/** Throws unless at least one release key is trusted (nothing can be verified without one). */
export function requireTrustedKeys(trustedKeys: readonly string[]): void {
  if (trustedKeys.length === 0) {
    throw new CliError("no release signing key is trusted; nothing was installed", {
      hint: `Pin the publisher's Ed25519 public key: export ${RELEASE_KEY_ENV}=<base64 key> ` +
        '(docs/cli.md, "Pinning the release key": where the key is published and how to check it).',
    });
  }
}

/** The URL of the latest-release index. */
export function latestIndexUrl(base: string): string {
  return `${base}/latest/download/${INDEX_FILE}`;
}

/** The URL of the index's signature. */
export function latestSignatureUrl(base: string): string {
  return `${base}/latest/download/${INDEX_SIGNATURE_FILE}`;
}

/**
 * Reads the latest-release index `{"version": "…"}` and believes it only when `latest.json.sig`
 * verifies with `trustedKeys`: an unsigned index would let any mirror name any version.
 */
export async function resolveLatest(
  http: HttpClient,
  base: string,
  trustedKeys: readonly string[],
): Promise<string> {
  requireTrustedKeys(trustedKeys);
  const url = latestIndexUrl(base);
  const res = await http.send({ method: "GET", url, peer: "the release server" });
  if (res.status !== 200) {
    throw new CliError(
      `cannot find the latest release at ${url} (${res.status}): ${
        describeApiError(apiErrorOf(res))
      }`,
      { hint: "Pass --version VERSION, or set GWCLI_RELEASE_URL to your release mirror." },
    );
  }
  const sigUrl = latestSignatureUrl(base);
  const sig = await http.send({ method: "GET", url: sigUrl, peer: "the release server" });
  if (sig.status !== 200) {
    throw new CliError(
      `the release index ${url} is not signed (${sigUrl}: ${sig.status}); nothing was installed`,
      {
        hint: "The mirror predates signed indexes, or is not the publisher's. " +
          "Pass --version VERSION to install a release by name (its checksums are signed).",
      },
    );
  }
  if (!(await verifyRelease(trustedKeys, new TextEncoder().encode(res.text), sig.text.trim()))) {
    throw new CliError(
      `the release index ${url} is not signed by a trusted release key; nothing was installed`,
      { hint: "The index was changed after signing, or is not the publisher's." },
    );
  }
  let version: unknown;
  try {
    version = JSON.parse(res.text)?.version;
  } catch {
    version = undefined;
  }
  if (typeof version !== "string" || !VERSION.test(version)) {
    throw new CliError(`${url} names no version (expected {"version": "0.12.0"})`);
  }
  return parseVersion(version);
}

/** Parses `sha256sum` output (`<hex>  <name>` or `<hex> *<name>`) into name -> hex. */
export function parseChecksums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trim());
    if (m) sums.set(m[2].trim().replace(/^\.\//, ""), m[1].toLowerCase());
  }
  return sums;
}

/** A text file of the release; 200 or a CliError naming `what`. */
async function releaseText(http: HttpClient, url: string, what: string) {
  const res = await http.send({ method: "GET", url, peer: "the release server" });
  if (res.status !== 200) {
    throw new CliError(`cannot read ${what} at ${url} (${res.status}); nothing was installed`);
  }
  return res;
}

/**
 * Fetches `SHA256SUMS` and its signature, verifies the signature with `trustedKeys`, and returns
 * the checksum of `archiveName`. The name carries the version, so another release's signed
 * checksums served under this version's URL list no such name and are refused.
 */
export async function expectedChecksum(
  http: HttpClient,
  files: ReleaseFiles,
  trustedKeys: readonly string[],
): Promise<string> {
  requireTrustedKeys(trustedKeys);
  const res = await releaseText(http, files.checksumsUrl, "the checksums");
  const sig = await releaseText(http, files.signatureUrl, "the signature");
  const signed = await verifyRelease(
    trustedKeys,
    new TextEncoder().encode(res.text),
    sig.text.trim(),
  );
  if (!signed) {
    throw new CliError(
      `${files.checksumsUrl} is not signed by a trusted release key; nothing was installed`,
      { hint: "The release was changed after signing, or is not the publisher's." },
    );
  }
  const sum = parseChecksums(res.text).get(files.archiveName);
  if (!sum) {
    throw new CliError(
      `${files.checksumsUrl} lists no checksum for ${files.archiveName}; nothing was installed`,
    );
  }
  return sum;
}
