/**
 * Where `jwt_auth` gets its verification keys: a JWKS URL (fetched with jose's remote key set:
 * cached, fetched again when a token names an unknown `kid` but at most every 30 seconds, each
 * fetch bounded in time and in size) or a JWKS file read when the configuration is loaded.
 */
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from "jose";

/** Largest JWKS document accepted, 256 KiB (a set of a few keys is a few KiB). */
export const MAX_JWKS_BYTES = 256 * 1024;
/** How long a JWKS fetch may take. */
const FETCH_TIMEOUT_MS = 5_000;
/** Least time between two fetches (a flood of unknown `kid`s makes one fetch, not many). */
const COOLDOWN_MS = 30_000;
/** Keys are fetched again after this long even when every `kid` is known. */
const MAX_AGE_MS = 10 * 60_000;

/** Reads a response body up to `limit` bytes; throws past it. */
async function boundedText(res: Response, limit: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new Error(`the JWKS document is larger than ${limit} bytes`);
    }
    parts.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** fetch for jose that refuses oversized documents (and follows no redirect, as jose asks). */
async function cappedFetch(
  url: string,
  options: { headers: Headers; method: "GET"; redirect: "manual"; signal: AbortSignal },
): Promise<Response> {
  const res = await fetch(url, options);
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    return new Response(null, { status: res.status });
  }
  const text = await boundedText(res, MAX_JWKS_BYTES);
  return new Response(text, { status: 200, headers: { "content-type": "application/json" } });
}

/** The keys of a JWKS URL. */
export function remoteKeys(url: string): JWTVerifyGetKey {
  return createRemoteJWKSet(new URL(url), {
    timeoutDuration: FETCH_TIMEOUT_MS,
    cooldownDuration: COOLDOWN_MS,
    cacheMaxAge: MAX_AGE_MS,
    [customFetch]: cappedFetch,
  });
}

/** The keys of a JWKS file (its text), checked now. */
export function localKeys(text: string, file: string): JWTVerifyGetKey {
  if (text.length > MAX_JWKS_BYTES) throw new Error(`${file}: larger than ${MAX_JWKS_BYTES} bytes`);
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON: ${(err as Error).message}`, { cause: err });
  }
  const keys = (jwks as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new Error(`${file}: expected a JWKS object {"keys": [...]} with at least one key`);
  }
  for (const [i, key] of keys.entries()) {
    if ((key as { d?: unknown })?.d !== undefined) {
      throw new Error(`${file}: key ${i} is a private key; publish only public keys`);
    }
    if ((key as { kty?: unknown })?.kty === "oct") {
      throw new Error(`${file}: key ${i} is a symmetric (oct) key; only public keys verify tokens`);
    }
  }
  return createLocalJWKSet(jwks as { keys: [] });
}
