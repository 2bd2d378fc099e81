/**
 * Signing and encryption of JMIX packages, WebCrypto only.
 * - Signature: `manifest.jws`, a JWS compact serialization (RFC 7515) with protected header
 *   `{"alg":"EdDSA","typ":"jmix-manifest+jws"}` (plus `kid` when a key id is set) whose payload is
 *   the exact bytes of `manifest.json`; Ed25519 (RFC 8037).
 * - Encryption: an ephemeral X25519 key pair per package; the shared secret (X25519 with the
 *   recipient's public key, 32 bytes) goes through HKDF-SHA256 with a random 32-byte salt and the
 *   info `JMIX-1.0 payload` to a 256-bit AES-GCM key; a random 96-bit IV; additional data
 *   `jmix:<manifest id>`; the 128-bit tag is appended to the ciphertext. The plaintext is a zip of
 *   the payload files (paths relative to `payload/`), stored as `payload.enc`.
 */

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();
/** HKDF info string of the payload key. */
export const HKDF_INFO = "JMIX-1.0 payload";
/** Algorithm name written into `manifest.security.encryption.alg`. */
export const ENCRYPTION_ALG = "ECDH-X25519+HKDF-SHA256+A256GCM";

/** base64url without padding. */
export function b64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Bytes of base64url (padding optional); throws on other characters. */
export function fromB64url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("not base64url");
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "=".repeat((4 - b64.length % 4) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** DER bytes of a PEM block (`-----BEGIN ...-----`). */
export function pemBytes(pem: string): Uint8Array {
  const body = pem.replace(/-----(BEGIN|END)[^-]*-----/g, "").replace(/\s+/g, "");
  if (!body) throw new Error("empty PEM");
  return Uint8Array.from(atob(body), (c) => c.charCodeAt(0));
}

/** Import an Ed25519 PKCS#8 PEM private key for signing. */
export function importSigningKey(pem: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "pkcs8",
    pemBytes(pem) as BufferSource,
    { name: "Ed25519" },
    false,
    [
      "sign",
    ],
  );
}

/** Import an Ed25519 SPKI PEM public key for verifying. */
export function importVerifyKey(pem: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "spki",
    pemBytes(pem) as BufferSource,
    { name: "Ed25519" },
    false,
    [
      "verify",
    ],
  );
}

/** Import an X25519 SPKI PEM public key (the recipient of encrypted payloads). */
export function importRecipientKey(pem: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "spki",
    pemBytes(pem) as BufferSource,
    { name: "X25519" },
    true,
    [],
  );
}

/** Import an X25519 PKCS#8 PEM private key (to decrypt payloads). */
export function importDecryptionKey(pem: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "pkcs8",
    pemBytes(pem) as BufferSource,
    { name: "X25519" },
    false,
    [
      "deriveBits",
    ],
  );
}

/** `manifest.jws` for the manifest bytes. */
export async function signManifest(
  manifest: Uint8Array,
  key: CryptoKey,
  keyId?: string,
): Promise<string> {
  const header: Record<string, string> = { alg: "EdDSA", typ: "jmix-manifest+jws" };
  if (keyId) header.kid = keyId;
  const input = `${b64url(ENCODER.encode(JSON.stringify(header)))}.${b64url(manifest)}`;
  const sig = await crypto.subtle.sign("Ed25519", key, ENCODER.encode(input));
  return `${input}.${b64url(new Uint8Array(sig))}`;
}

/** The problem with `manifest.jws` against the manifest bytes and keys, or undefined when valid. */
export async function verifyManifest(
  jws: string,
  manifest: Uint8Array,
  keys: CryptoKey[],
): Promise<string | undefined> {
  const parts = jws.trim().split(".");
  if (parts.length !== 3) return "manifest.jws is not a JWS compact serialization";
  let header: { alg?: string };
  let payload: Uint8Array;
  let sig: Uint8Array;
  try {
    header = JSON.parse(DECODER.decode(fromB64url(parts[0])));
    payload = fromB64url(parts[1]);
    sig = fromB64url(parts[2]);
  } catch {
    return "manifest.jws is not valid base64url JSON";
  }
  if (header.alg !== "EdDSA") return `manifest.jws alg is ${header.alg}, expected EdDSA`;
  if (payload.length !== manifest.length || payload.some((b, i) => b !== manifest[i])) {
    return "manifest.jws does not sign this manifest.json";
  }
  const input = ENCODER.encode(`${parts[0]}.${parts[1]}`);
  for (const key of keys) {
    if (await crypto.subtle.verify("Ed25519", key, sig as BufferSource, input)) return undefined;
  }
  return "manifest.jws signature does not verify with any configured key";
}

/** Encryption parameters as written into the manifest. */
export interface EncryptionParams {
  ephemeral_public_key: string;
  salt: string;
  iv: string;
}

async function payloadKey(shared: ArrayBuffer, salt: Uint8Array, usage: KeyUsage) {
  const ikm = await crypto.subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
  return await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: salt as BufferSource, info: ENCODER.encode(HKDF_INFO) },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    [usage],
  );
}

/** Encrypt `plaintext` for the recipient; `id` is the manifest id (bound as additional data). */
export async function encryptPayload(
  plaintext: Uint8Array,
  recipient: CryptoKey,
  id: string,
): Promise<{ ciphertext: Uint8Array; params: EncryptionParams }> {
  const eph = await crypto.subtle.generateKey({ name: "X25519" }, true, [
    "deriveBits",
  ]) as CryptoKeyPair;
  const shared = await crypto.subtle.deriveBits(
    { name: "X25519", public: recipient },
    eph.privateKey,
    256,
  );
  const salt = crypto.getRandomValues(new Uint8Array(32));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await payloadKey(shared, salt, "encrypt");
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: ENCODER.encode(`jmix:${id}`), tagLength: 128 },
    key,
    plaintext as BufferSource,
  );
  const pub = new Uint8Array(await crypto.subtle.exportKey("raw", eph.publicKey));
  return {
    ciphertext: new Uint8Array(ct),
    params: { ephemeral_public_key: b64url(pub), salt: b64url(salt), iv: b64url(iv) },
  };
}

/** Decrypt `payload.enc` with the recipient's private key; throws when it does not authenticate. */
export async function decryptPayload(
  ciphertext: Uint8Array,
  params: EncryptionParams,
  privateKey: CryptoKey,
  id: string,
): Promise<Uint8Array> {
  const ephemeral = await crypto.subtle.importKey(
    "raw",
    fromB64url(params.ephemeral_public_key) as BufferSource,
    { name: "X25519" },
    false,
    [],
  );
  const shared = await crypto.subtle.deriveBits(
    { name: "X25519", public: ephemeral },
    privateKey,
    256,
  );
  const key = await payloadKey(shared, fromB64url(params.salt), "decrypt");
  const pt = await crypto.subtle.decrypt(
    {
      name: "AES-GCM",
      iv: fromB64url(params.iv) as BufferSource,
      additionalData: ENCODER.encode(`jmix:${id}`),
      tagLength: 128,
    },
    key,
    ciphertext as BufferSource,
  );
  return new Uint8Array(pt);
}
