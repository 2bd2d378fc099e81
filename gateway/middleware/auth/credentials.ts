/**
 * Credentials as clients send them: `Authorization: Basic …` (RFC 7617) and `Authorization:
 * Bearer …` (RFC 6750), and API keys. Parsing is bounded: a credential longer than
 * {@link MAX_CREDENTIAL_LENGTH} is refused before it is decoded or hashed.
 */
import { createHash } from "node:crypto";

/** Longest credential looked at, 8 KiB (a large JWT is about 2 KiB). */
export const MAX_CREDENTIAL_LENGTH = 8192;

/** A Basic credential, or why there is none. */
export type BasicCredential =
  | { user: string; password: string }
  | { problem: "missing" | "malformed" };

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The user and password of an `Authorization: Basic` header. */
export function basicCredential(authorization: string | null): BasicCredential {
  if (authorization === null) return { problem: "missing" };
  const m = /^basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(authorization);
  if (!m) {
    return /^basic(?:\s|$)/i.test(authorization)
      ? { problem: "malformed" }
      : { problem: "missing" };
  }
  if (m[1].length > MAX_CREDENTIAL_LENGTH) return { problem: "malformed" };
  let text: string;
  try {
    text = UTF8.decode(Uint8Array.from(atob(m[1]), (c) => c.charCodeAt(0)));
  } catch {
    return { problem: "malformed" };
  }
  const colon = text.indexOf(":");
  if (colon <= 0) return { problem: "malformed" };
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The token of an `Authorization: Bearer` header; null when there is none or it is not one. */
export function bearerToken(authorization: string | null): string | null {
  if (authorization === null) return null;
  const m = /^bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i.exec(authorization);
  return m && m[1].length <= MAX_CREDENTIAL_LENGTH ? m[1] : null;
}

/** SHA-256 of a text, lowercase hex (how API keys are stored in the configuration). */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
