/**
 * Encryption at rest of the token signing keys. Whoever holds a private signing key can mint
 * tokens for every user and gateway, so the KV database (and every backup of it) holds them only
 * AES-256-GCM encrypted, with the key's `kid` as additional data (a record cannot be moved to
 * another kid). The 32-byte key comes from `CLOUD_KEY_ENCRYPTION_KEY` (base64), or from the file
 * `CLOUD_KEY_ENCRYPTION_KEY_FILE` names; without either the service refuses to start, except in
 * development mode (a loopback base URL), where a key is generated into
 * `<data-dir>/dev-key-encryption.key` (0600) with a warning.
 *
 * @example
 * ```ts
 * import { keyEncryptionKey, openSecret, sealSecret } from "./key_encryption.ts";
 * const key = await keyEncryptionKey(btoa(String.fromCharCode(...new Uint8Array(32))));
 * const sealed = await sealSecret(key, "kid-1", '{"d":"…"}');
 * await openSecret(key, "kid-1", sealed); // '{"d":"…"}'
 * ```
 */
import { Buffer } from "node:buffer";
import type { SealedSecret } from "../store/mod.ts";

/** Environment variable holding the key (base64 of 32 random bytes). */
export const KEY_ENCRYPTION_ENV = "CLOUD_KEY_ENCRYPTION_KEY";
/** Environment variable naming a file that holds the key instead. */
export const KEY_ENCRYPTION_FILE_ENV = "CLOUD_KEY_ENCRYPTION_KEY_FILE";
/** File of the generated development key in the data directory. */
export const DEV_KEY_FILE = "dev-key-encryption.key";

/** A secret as stored (the store keeps its shape, this module makes and opens it). */
export type { SealedSecret };

/** Why the service cannot start without a key, with the fix. */
export const MISSING_KEY_MESSAGE = `${KEY_ENCRYPTION_ENV} is not set: the token signing keys are ` +
  "stored encrypted with it. Generate one with `openssl rand -base64 32`, keep it in your secret " +
  `manager, and set ${KEY_ENCRYPTION_ENV} for every instance of the service (without it, only a ` +
  "development service on a loopback base URL starts)";

/** Imports a base64 key text; throws a message that never repeats the value. */
export async function keyEncryptionKey(text: string): Promise<CryptoKey> {
  const trimmed = text.trim();
  const raw = Buffer.from(trimmed, "base64");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || raw.byteLength !== 32) {
    throw new Error(
      `${KEY_ENCRYPTION_ENV} must be the base64 of 32 bytes (got ${raw.byteLength} bytes); ` +
        "generate one with `openssl rand -base64 32`",
    );
  }
  return await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** True for a base URL only this host can reach (development mode). */
export function isLoopbackUrl(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The key text of the file `path` (`CLOUD_KEY_ENCRYPTION_KEY_FILE`); errors name the file. */
export async function readKeyFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new Error(
      `${KEY_ENCRYPTION_FILE_ENV}: cannot read ${path} (${(err as Error).name}): create it once ` +
        `with \`openssl rand -base64 32 > ${path}\`, and allow reading it (--allow-read)`,
    );
  }
  if (text.trim() === "") throw new Error(`${KEY_ENCRYPTION_FILE_ENV}: ${path} is empty`);
  return text;
}

/**
 * The key of this service: from the environment or the file it names, else (development mode
 * only) the data directory's generated key; throws {@link MISSING_KEY_MESSAGE} otherwise.
 */
export async function resolveKeyEncryptionKey(options: {
  envKey: string | undefined;
  /** `CLOUD_KEY_ENCRYPTION_KEY_FILE`: a file holding the key. */
  keyFile?: string;
  baseUrl: string;
  dataDir: string;
  warn: (message: string) => void;
}): Promise<CryptoKey> {
  const hasEnvKey = options.envKey !== undefined && options.envKey.trim() !== "";
  const keyFile = options.keyFile?.trim() || undefined;
  if (hasEnvKey && keyFile) {
    throw new Error(`set ${KEY_ENCRYPTION_ENV} or ${KEY_ENCRYPTION_FILE_ENV}, not both`);
  }
  if (hasEnvKey) return await keyEncryptionKey(options.envKey!);
  if (keyFile) {
    const text = await readKeyFile(keyFile);
    try {
      return await keyEncryptionKey(text);
    } catch (err) {
      throw new Error(`${KEY_ENCRYPTION_FILE_ENV} (${keyFile}): ${(err as Error).message}`);
    }
  }
  if (!isLoopbackUrl(options.baseUrl)) throw new Error(MISSING_KEY_MESSAGE);
  const file = `${options.dataDir}/${DEV_KEY_FILE}`;
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    text = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    await Deno.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(file, text + "\n", { mode: 0o600, createNew: true });
  }
  options.warn(
    `${KEY_ENCRYPTION_ENV} is not set: development mode (loopback base URL) uses the generated ` +
      `key in ${file}; a service others reach needs ${KEY_ENCRYPTION_ENV}`,
  );
  return await keyEncryptionKey(text);
}

/** Encrypts `plaintext` for the record `kid`. */
export async function sealSecret(
  key: CryptoKey,
  kid: string,
  plaintext: string,
): Promise<SealedSecret> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(kid) },
    key,
    new TextEncoder().encode(plaintext),
  );
  return {
    alg: "A256GCM",
    iv: Buffer.from(iv).toString("base64"),
    data: Buffer.from(data).toString("base64"),
  };
}

/** Decrypts a sealed secret of record `kid`; a wrong key or a moved record is an error. */
export async function openSecret(
  key: CryptoKey,
  kid: string,
  sealed: SealedSecret,
): Promise<string> {
  try {
    const plain = await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: Buffer.from(sealed.iv, "base64"),
        additionalData: new TextEncoder().encode(kid),
      },
      key,
      Buffer.from(sealed.data, "base64"),
    );
    return new TextDecoder().decode(plain);
  } catch {
    throw new Error(
      `signing key ${kid} cannot be decrypted: ${KEY_ENCRYPTION_ENV} is not the key it was ` +
        "stored with",
    );
  }
}
