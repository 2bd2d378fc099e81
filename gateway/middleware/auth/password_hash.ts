/**
 * Password hashes of an htpasswd file, verified without blocking the event loop: bcrypt
 * (`$2a$`, `$2b$`, `$2y$`, as `htpasswd -B` writes) with bcryptjs, and Argon2 (`$argon2id$`,
 * `$argon2i$` in PHC form) with @noble/hashes, both pure JavaScript that yields while it works.
 * Nothing weaker (plain text, crypt, MD5 `$apr1$`, SHA-1 `{SHA}`) is accepted: `hashProblem`
 * names it when the file is loaded. Argon2 parameters are bounded so that a configuration cannot
 * make one check cost minutes.
 */
import bcrypt from "bcryptjs";
import { argon2iAsync, argon2idAsync } from "@noble/hashes/argon2.js";
import { timingSafeEqual } from "node:crypto";

/** Largest Argon2 memory accepted, 256 MiB (in KiB as PHC writes it). */
const MAX_ARGON2_MEMORY_KIB = 256 * 1024;
/** Most Argon2 passes and lanes accepted. */
const MAX_ARGON2_TIME = 10;
const MAX_ARGON2_LANES = 8;
/** Highest bcrypt cost accepted (2^14 rounds already take about a second in JavaScript). */
const MAX_BCRYPT_COST = 14;

const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const ARGON2 =
  /^\$(argon2id|argon2i)\$v=(16|19)\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Why `hash` cannot be used (a weak or unknown scheme, parameters out of bounds), or null. */
export function hashProblem(hash: string): string | null {
  const b = BCRYPT.exec(hash);
  if (b) {
    const cost = Number(b[1]);
    return cost >= 4 && cost <= MAX_BCRYPT_COST
      ? null
      : `bcrypt cost ${cost} is outside 4-${MAX_BCRYPT_COST}`;
  }
  const a = ARGON2.exec(hash);
  if (a) {
    const [m, t, p] = [Number(a[3]), Number(a[4]), Number(a[5])];
    if (m > MAX_ARGON2_MEMORY_KIB) return `Argon2 memory ${m} KiB is over ${MAX_ARGON2_MEMORY_KIB}`;
    if (t < 1 || t > MAX_ARGON2_TIME) {
      return `Argon2 time cost ${t} is outside 1-${MAX_ARGON2_TIME}`;
    }
    if (p < 1 || p > MAX_ARGON2_LANES) return `Argon2 lanes ${p} is outside 1-${MAX_ARGON2_LANES}`;
    if (m < 8 * p) return `Argon2 memory ${m} KiB is below 8 KiB per lane`;
    return null;
  }
  if (hash.startsWith("$apr1$") || hash.startsWith("$1$")) {
    return "MD5 hashes ($apr1$) are not accepted; use bcrypt (htpasswd -B) or Argon2";
  }
  if (hash.startsWith("{SHA}")) {
    return "SHA-1 hashes ({SHA}) are not accepted; use bcrypt (htpasswd -B) or Argon2";
  }
  return "not a bcrypt or Argon2 hash (plain text and crypt are not accepted; use htpasswd -B)";
}

function unbase64(text: string): Uint8Array {
  const padded = text + "=".repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

/** True when `password` matches `hash` (a hash `hashProblem` accepted). */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  if (BCRYPT.test(hash)) return await bcrypt.compare(password, hash);
  const a = ARGON2.exec(hash);
  if (!a) return false;
  const expected = unbase64(a[7]);
  const options = {
    m: Number(a[3]),
    t: Number(a[4]),
    p: Number(a[5]),
    version: Number(a[2]),
    dkLen: expected.length,
  };
  const derive = a[1] === "argon2id" ? argon2idAsync : argon2iAsync;
  const actual = await derive(new TextEncoder().encode(password), unbase64(a[6]), options);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
