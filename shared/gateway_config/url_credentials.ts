/**
 * Credentials written inside URLs: userinfo (`https://user:password@host/`, or a user alone) and
 * query or fragment parameters whose names look secret (`?access_token=…`, `X-Amz-Signature=…`).
 * Found in any string (a URL value, a path with a query, or URLs inside a longer text), redacted
 * by the gateway before it uploads anything to the cloud, and refused by the cloud in records.
 * Only the credential parts change: everything else of the text stays byte for byte. A part that
 * is only `${VAR}` references (or already `<redacted>`) is not a credential and stays.
 *
 * Secret-looking parameter names (compared in lower case, `-` and `.` read as `_`, a FHIR
 * `:modifier` dropped, percent-decoded): exactly `key`, `sig`, `auth`, `code`, `pass`, `pwd`,
 * `jwt`; or containing `token`, `secret`, `passw`, `credential` or `signature`; or ending in `key`,
 * `key_id` or `keyid`; or with `auth` as a `_`-separated word (`auth_token`, `x_auth`, not
 * `author`). This covers `access_token`, `api_key`/`apikey`, `client_secret`, `password`/`passwd`,
 * `X-Amz-Signature`/`X-Amz-Credential`/`X-Amz-Security-Token`, `subscription-key`, `sig` (SAS).
 *
 * @example
 * ```ts
 * import { redactUrlCredentials, urlCredentials } from "./url_credentials.ts";
 * redactUrlCredentials("https://u:pw@h/fhir?access_token=abc&_count=5");
 * // "https://<redacted>:<redacted>@h/fhir?access_token=<redacted>&_count=5"
 * urlCredentials("https://${USER}:${PASS}@h/?token=${TOKEN}"); // [] (references only)
 * ```
 */
import { childPath, isTable } from "./fields.ts";
import { isSecretReference, REDACTED } from "./secret_reference.ts";

/** One credential found in a URL (never its value). */
export interface UrlCredential {
  /** `userinfo` (`user:password@`), or a `query` or `fragment` parameter. */
  part: "userinfo" | "query" | "fragment";
  /** The parameter's name as written (query and fragment). */
  name?: string;
}

/** Where a tree holds a string with credentials in URLs. */
export interface UrlCredentialPath {
  /** Key path, array items as `key[0]`. */
  path: string;
  found: UrlCredential[];
}

const EXACT_NAMES = new Set(["key", "sig", "auth", "code", "pass", "pwd", "jwt"]);
const NAME_PARTS = /token|secret|passw|credential|signature|key$|key_?id$|(?:^|_)auth(?:_|$)/;

/** True when a query parameter named `name` carries a credential by its name. */
export function isSecretQueryName(name: string): boolean {
  const n = decode(name.replaceAll("+", " ")).split(":")[0].toLowerCase().replace(/[-.]/g, "_");
  return EXACT_NAMES.has(n) || NAME_PARTS.test(n);
}

/** A URL (`scheme://…`) up to the next blank, quote or backtick. */
const URL_TOKEN = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'`]+/g;
/** A whole value that is an absolute path with a query (`/v1?access_token=…`). */
const PATH_WITH_QUERY = /^\/[^\s?#]*\?/;

/** The credentials in every URL of `value`, and `value` with them redacted. */
export function inspectUrlCredentials(value: string): { found: UrlCredential[]; redacted: string } {
  const found: UrlCredential[] = [];
  if (PATH_WITH_QUERY.test(value)) {
    const q = value.indexOf("?");
    return { found, redacted: value.slice(0, q) + afterPath(value.slice(q), found) };
  }
  return { found, redacted: value.replace(URL_TOKEN, (url) => oneUrl(url, found)) };
}

/** Credentials in every URL of `value` (a URL, a path with a query, or a text with URLs). */
export function urlCredentials(value: string): UrlCredential[] {
  return inspectUrlCredentials(value).found;
}

/** `value` with the credentials of its URLs replaced by `<redacted>`; the rest unchanged. */
export function redactUrlCredentials(value: string): string {
  return inspectUrlCredentials(value).redacted;
}

/** A short description of what was found, for messages (names only, never values). */
export function describeUrlCredentials(found: UrlCredential[]): string {
  const parts = new Set(
    found.map((f) =>
      f.part === "userinfo"
        ? "user or password (`user:password@`)"
        : `${f.part} parameter \`${f.name}\``
    ),
  );
  return [...parts].join(", ");
}

/** Every string of `tree` (tables and arrays, any depth) whose URLs carry credentials. */
export function urlCredentialPaths(tree: unknown, base = ""): UrlCredentialPath[] {
  const out: UrlCredentialPath[] = [];
  walk(tree, base, (value, path) => {
    const found = urlCredentials(value);
    if (found.length) out.push({ path, found });
    return value;
  });
  return out;
}

/** A copy of `tree` with every URL credential redacted, and the paths of the strings changed. */
export function redactUrlCredentialsDeep<T>(tree: T, base = ""): { value: T; paths: string[] } {
  const paths: string[] = [];
  const value = walk(tree, base, (text, path) => {
    const redacted = redactUrlCredentials(text);
    if (redacted !== text) paths.push(path);
    return redacted;
  }) as T;
  return { value, paths };
}

function walk(
  node: unknown,
  path: string,
  onString: (value: string, path: string) => string,
): unknown {
  if (typeof node === "string") return onString(node, path);
  if (Array.isArray(node)) return node.map((item, i) => walk(item, childPath(path, i), onString));
  if (!isTable(node)) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(node)) {
    copy[key] = walk(item, childPath(path, key), onString);
  }
  return copy;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** True when a userinfo component or a parameter value may stay: empty, `${VAR}`, redacted. */
function harmless(raw: string): boolean {
  return isSecretReference(raw) || isSecretReference(decode(raw));
}

/** One `scheme://authority/path?query#fragment`, its credentials noted in `found` and redacted. */
function oneUrl(url: string, found: UrlCredential[]): string {
  const start = url.indexOf("://") + 3;
  const end = firstOf(url, "/?#", start);
  const authority = url.slice(start, end);
  const at = authority.lastIndexOf("@");
  let userinfo = "";
  if (at >= 0) {
    const colon = authority.indexOf(":");
    const parts = colon >= 0 && colon < at
      ? [authority.slice(0, colon), authority.slice(colon + 1, at)]
      : [authority.slice(0, at)];
    const literal = parts.map((p) => !harmless(p));
    if (literal.some(Boolean)) found.push({ part: "userinfo" });
    userinfo = parts.map((p, i) => literal[i] ? REDACTED : p).join(":") + "@";
  }
  const host = authority.slice(at + 1);
  return url.slice(0, start) + userinfo + host + afterPath(url.slice(end), found);
}

/** The path, query and fragment of a URL, secret-looking parameter values redacted. */
function afterPath(rest: string, found: UrlCredential[]): string {
  const hash = rest.indexOf("#");
  const beforeHash = hash >= 0 ? rest.slice(0, hash) : rest;
  const q = beforeHash.indexOf("?");
  let out = q >= 0
    ? beforeHash.slice(0, q + 1) + params(beforeHash.slice(q + 1), "query", found)
    : beforeHash;
  if (hash >= 0) out += "#" + params(rest.slice(hash + 1), "fragment", found);
  return out;
}

/** `a=1&b=2` with the values of secret-looking names redacted. */
function params(text: string, part: "query" | "fragment", found: UrlCredential[]): string {
  return text.split("&").map((pair) => {
    const eq = pair.indexOf("=");
    if (eq < 0) return pair;
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!isSecretQueryName(name) || harmless(value)) return pair;
    found.push({ part, name: decode(name) });
    return `${name}=${REDACTED}`;
  }).join("&");
}

function firstOf(text: string, chars: string, from: number): number {
  for (let i = from; i < text.length; i++) if (chars.includes(text[i])) return i;
  return text.length;
}
