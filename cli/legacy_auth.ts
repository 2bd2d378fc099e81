/**
 * The legacy token file `~/.gwcli/auth.json` (plain text, from earlier gwcli releases). Its shape
 * was never specified, so every shape seen in the field is read: `{"token": …}`,
 * `{"access_token": …}`, `{"user_token": …}` (each with an optional `api_url`/`api-url`), or the
 * bare token.
 */
import { readTextIfExists } from "./files.ts";

/** A token read from the legacy file. */
export interface LegacyToken {
  token: string;
  /** The cloud the token came from, when the file says. */
  apiUrl?: string;
}

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Parses the legacy file's text; undefined when it holds no token. */
export function parseLegacyAuth(text: string): LegacyToken | undefined {
  const trimmed = text.trim();
  if (JWT.test(trimmed)) return { token: trimmed };
  let raw: unknown;
  try {
    raw = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof raw === "string" && JWT.test(raw.trim())) return { token: raw.trim() };
  if (typeof raw !== "object" || raw === null) return undefined;
  const o = raw as Record<string, unknown>;
  const token = [o.access_token, o.token, o.user_token].find((v) =>
    typeof v === "string" && v.trim() !== ""
  ) as string | undefined;
  if (!token) return undefined;
  const apiUrl = [o.api_url, o["api-url"]].find((v) => typeof v === "string") as
    | string
    | undefined;
  return apiUrl ? { token: token.trim(), apiUrl } : { token: token.trim() };
}

/** Reads the legacy file: null when missing, undefined token when it holds none. */
export async function readLegacyAuth(
  path: string,
): Promise<{ found: false } | { found: true; token?: LegacyToken; modified: Date | null }> {
  const text = await readTextIfExists(path);
  if (text === undefined) return { found: false };
  const modified = (await Deno.stat(path)).mtime;
  return { found: true, token: parseLegacyAuth(text), modified };
}
