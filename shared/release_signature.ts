/**
 * Release signatures: the release task signs the bytes of `SHA256SUMS` and of the latest-release
 * index `latest.json` with the publisher's Ed25519 key and writes each signature (base64) beside
 * its file (`SHA256SUMS.sig`, `latest.json.sig`); gwcli verifies them with the public keys it
 * trusts before it believes a checksum or the version the index names. Public keys travel as
 * base64 of the raw 32 bytes, private keys as base64 of PKCS #8.
 */

/** Name of the signature file beside `SHA256SUMS`. */
export const SIGNATURE_FILE = "SHA256SUMS.sig";
/** Name of the latest-release index: `{"version": "0.12.0"}`. */
export const INDEX_FILE = "latest.json";
/** Name of the index's signature file beside it (signed over the index's exact bytes). */
export const INDEX_SIGNATURE_FILE = "latest.json.sig";

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const compact = text.trim().replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(compact.padEnd(compact.length + (4 - compact.length % 4) % 4, "="));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Why `text` is not an Ed25519 public key (base64 of 32 bytes), or null. */
export function releaseKeyProblem(text: string): string | null {
  try {
    return fromBase64(text).byteLength === 32
      ? null
      : "an Ed25519 public key is 32 bytes, base64-encoded";
  } catch {
    return "not base64";
  }
}

/** Signs `data` with a base64 PKCS #8 Ed25519 private key; the signature as base64. */
export async function signRelease(privateKeyPkcs8: string, data: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey(
    "pkcs8",
    fromBase64(privateKeyPkcs8),
    { name: "Ed25519" },
    false,
    ["sign"],
  );
  const signature = await crypto.subtle.sign("Ed25519", key, data as BufferSource);
  return toBase64(new Uint8Array(signature));
}

/** True when `signature` (base64) is a signature of `data` by one of `publicKeys`. */
export async function verifyRelease(
  publicKeys: readonly string[],
  data: Uint8Array,
  signature: string,
): Promise<boolean> {
  let sig: Uint8Array<ArrayBuffer>;
  try {
    sig = fromBase64(signature);
  } catch {
    return false;
  }
  for (const text of publicKeys) {
    if (releaseKeyProblem(text)) continue;
    const key = await crypto.subtle.importKey(
      "raw",
      fromBase64(text),
      { name: "Ed25519" },
      false,
      ["verify"],
    );
    if (await crypto.subtle.verify("Ed25519", key, sig, data as BufferSource)) return true;
  }
  return false;
}

/** A new key pair for a publisher (or a test): base64 PKCS #8 private, base64 raw public. */
export async function generateReleaseKey(): Promise<{ privateKey: string; publicKey: string }> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  return {
    privateKey: toBase64(new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey))),
    publicKey: toBase64(new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey))),
  };
}
