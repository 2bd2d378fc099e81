/**
 * Password hashes of an htpasswd file: bcrypt (`$2a$`, `$2b$`, `$2y$`, as `htpasswd -B` writes)
 * with bcryptjs, and Argon2 (`$argon2id$`, `$argon2i$` in PHC form) with @noble/hashes, both pure
 * JavaScript. Nothing weaker (plain text, crypt, MD5 `$apr1$`, SHA-1 `{SHA}`) is accepted:
 * `hashProblem` names it when the file is loaded. A check is CPU work that blocks the thread it
 * runs on, so it runs in the password workers (password_pool.ts), and its cost is bounded when the
 * file is loaded: see docs/security.md for the figures behind the bounds.
 */
import bcrypt from "bcryptjs";
import { argon2i, argon2id } from "@noble/hashes/argon2.js";
import { timingSafeEqual } from "node:crypto";

/**
 * Highest bcrypt cost accepted. One check in a password worker takes 213 ms at cost 12 on the
 * 2-core reference machine (doubling per step: 13 is 430 ms, 14 is 850 ms), which is what the
 * gateway can afford per attempt while it serves (docs/security.md).
 */
export const MAX_BCRYPT_COST = 12;
/** Largest Argon2 memory accepted, 64 MiB (in KiB as PHC writes it). */
export const MAX_ARGON2_MEMORY_KIB = 64 * 1024;
/**
 * Most Argon2 work accepted, memory (KiB) times passes: 64 Mi KiB-passes take about 250 ms in a
 * password worker here, as much as bcrypt cost 12 (lanes do not run in parallel in JavaScript).
 */
export const MAX_ARGON2_WORK = 64 * 1024;
/** Most Argon2 passes and lanes accepted. */
const MAX_ARGON2_TIME = 10;
const MAX_ARGON2_LANES = 8;

/** Milliseconds of one check on the reference machine: bcrypt per 2^cost rounds, Argon2 per KiB-pass. */
const BCRYPT_MS_PER_ROUND = 53 / 1024;
const ARGON2_MS_PER_KIB_PASS = 0.0039;

const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const ARGON2 =
  /^\$(argon2id|argon2i)\$v=(16|19)\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Why `hash` cannot be used (a weak or unknown scheme, parameters out of bounds), or null. */
export function hashProblem(hash: string): string | null {
  const b = BCRYPT.exec(hash);
  if (b) {
    const cost = Number(b[1]);
    if (cost > MAX_BCRYPT_COST) {
      return `bcrypt cost ${cost} is over ${MAX_BCRYPT_COST}, the most a gateway can check ` +
        `while it serves (about ${Math.round(checkMillis(hash))} ms of CPU per attempt); ` +
        `use htpasswd -B -C ${MAX_BCRYPT_COST} or lower`;
    }
    return cost >= 4 ? null : `bcrypt cost ${cost} is below 4`;
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
    if (m * t > MAX_ARGON2_WORK) {
      return `Argon2 memory times passes ${m * t} is over ${MAX_ARGON2_WORK}, the most a ` +
        `gateway can check while it serves (about ${Math.round(checkMillis(hash))} ms of CPU ` +
        "per attempt)";
    }
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

/** About how many milliseconds of CPU one check of `hash` takes on the reference machine. */
export function checkMillis(hash: string): number {
  const b = BCRYPT.exec(hash);
  if (b) return BCRYPT_MS_PER_ROUND * 2 ** Number(b[1]);
  const a = ARGON2.exec(hash);
  if (a) return ARGON2_MS_PER_KIB_PASS * Number(a[3]) * Number(a[4]);
  return 0;
}

/**
 * The scheme and cost of `hash` as a metric label (`bcrypt cost=11`, `argon2id m=65536 t=3 p=4`):
 * what one check of it costs, without its salt or digest.
 */
export function hashParameters(hash: string): string {
  const b = BCRYPT.exec(hash);
  if (b) return `bcrypt cost=${Number(b[1])}`;
  const a = ARGON2.exec(hash);
  if (a) return `${a[1]} m=${a[3]} t=${a[4]} p=${a[5]}`;
  return "unknown";
}

/**
 * A hash with the scheme and cost parameters of `hash` but a random salt and digest: checking
 * any password against it costs what checking `hash` does, and nothing matches it (no password
 * is known for it, not even to the gateway).
 */
export function decoyLike(hash: string): string {
  const b = BCRYPT.exec(hash);
  if (b) {
    return bcrypt.genSaltSync(Number(b[1])) + bcrypt.encodeBase64(randomBytes(23), 23);
  }
  const a = ARGON2.exec(hash);
  if (!a) throw new Error("decoyLike: not a bcrypt or Argon2 hash");
  const salt = base64(randomBytes(unbase64(a[6]).length));
  const digest = base64(randomBytes(unbase64(a[7]).length));
  return `$${a[1]}$v=${a[2]}$m=${a[3]},t=${a[4]},p=${a[5]}$${salt}$${digest}`;
}

/**
 * True when `password` matches `hash` (a hash `hashProblem` accepted). Synchronous: it holds its
 * thread for the whole check, so only the password workers call it.
 */
export function passwordMatches(password: string, hash: string): boolean {
  if (BCRYPT.test(hash)) return bcrypt.compareSync(password, hash);
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
  const derive = a[1] === "argon2id" ? argon2id : argon2i;
  const actual = derive(new TextEncoder().encode(password), unbase64(a[6]), options);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function randomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/=+$/, "");
}

function unbase64(text: string): Uint8Array {
  const padded = text + "=".repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}
