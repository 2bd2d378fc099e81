/**
 * Password hashing: PBKDF2-HMAC-SHA256 from WebCrypto (runs off the event loop), 16-byte random
 * salt, 32-byte key, stored as `pbkdf2-sha256$<iterations>$<salt>$<key>` (base64url). The
 * iteration count is kept in the hash, so a count raised later applies at the next sign-in.
 */
import { base64Url, constantTimeEqual } from "../store/mod.ts";

const PREFIX = "pbkdf2-sha256";

/** Hashes `password` with `iterations` rounds and a fresh salt. */
export async function hashPassword(password: string, iterations: number): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const key = await derive(password, salt, iterations);
  return `${PREFIX}$${iterations}$${base64Url(salt)}$${base64Url(key)}`;
}

/** True when `password` matches `stored`; compares in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.iterations);
  return constantTimeEqual(base64Url(key), parsed.key);
}

/** True when `stored` used fewer iterations than `iterations` (rehash after a good sign-in). */
export function needsRehash(stored: string, iterations: number): boolean {
  const parsed = parseHash(stored);
  return !parsed || parsed.iterations < iterations;
}

/** A hash of a random password, verified against when the account does not exist (same timing). */
export async function dummyHash(iterations: number): Promise<string> {
  return await hashPassword(crypto.randomUUID(), iterations);
}

function parseHash(stored: string): { iterations: number; salt: Uint8Array; key: string } | null {
  const [prefix, count, salt, key] = stored.split("$");
  const iterations = Number(count);
  if (prefix !== PREFIX || !Number.isInteger(iterations) || iterations < 1 || !salt || !key) {
    return null;
  }
  return { iterations, salt: fromBase64Url(salt), key };
}

function fromBase64Url(text: string): Uint8Array {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b64 + "=".repeat((4 - b64.length % 4) % 4)), (c) => c.charCodeAt(0));
}

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(password.normalize("NFC")),
    "PBKDF2",
    false,
    ["deriveBits"],
  );
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations },
    material,
    256,
  );
  return new Uint8Array(bits);
}
