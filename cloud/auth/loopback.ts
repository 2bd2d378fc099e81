/**
 * Loopback aliases of the service's own address. A service whose base URL is a loopback address
 * (`http://localhost:8000`, `http://127.0.0.1:8000`) is the same service under its other loopback
 * names on the same port (`localhost`, `127.0.0.1`, `[::1]`): a client on this machine may use any
 * of them, and nothing off the machine reaches a loopback listener. A public base URL has no
 * aliases: its host is the only one.
 *
 * @example
 * ```ts
 * import { advertisedOrigin, isOwnAuthority } from "./loopback.ts";
 *
 * isOwnAuthority("127.0.0.1:8000", new URL("http://localhost:8000")); // true
 * advertisedOrigin("http://localhost:8000", "127.0.0.1:8000"); // "http://127.0.0.1:8000"
 * advertisedOrigin("https://cloud.example.com", "127.0.0.1"); // "https://cloud.example.com"
 * ```
 */

/** True for `localhost`, 127.0.0.0/8 and `[::1]` (as URL host names write them). */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === "localhost" || h === "[::1]" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The port of `url`, the scheme's default when it names none. */
function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/** `authority` (`host[:port]`) read with `own`'s scheme, or null when it is not a bare authority. */
function parseAuthority(authority: string, own: URL): URL | null {
  let other: URL;
  try {
    other = new URL(`${own.protocol}//${authority}`);
  } catch {
    return null;
  }
  if (other.username || other.password || other.pathname !== "/" || other.search) return null;
  if (other.hash || authority.includes("#")) return null;
  return other;
}

/** True when `authority` (`host[:port]`) names the service at `own` (itself or a loopback alias). */
export function isOwnAuthority(authority: string, own: URL): boolean {
  if (authority.toLowerCase() === own.host.toLowerCase()) return true;
  if (!isLoopbackHostname(own.hostname)) return false;
  const other = parseAuthority(authority, own);
  return other !== null && isLoopbackHostname(other.hostname) && portOf(other) === portOf(own);
}

/**
 * The origin to advertise to a client that reached the service at `authority` (its Host): the
 * alias it used when that is a loopback alias of a loopback `baseUrl`, else `baseUrl`'s origin. A
 * non-loopback Host never changes what is advertised.
 */
export function advertisedOrigin(baseUrl: string, authority: string | undefined): string {
  const own = new URL(baseUrl);
  if (!authority || !isLoopbackHostname(own.hostname) || !isOwnAuthority(authority, own)) {
    return own.origin;
  }
  return parseAuthority(authority, own)?.origin ?? own.origin;
}

/**
 * `url` with its origin replaced by `baseUrl`'s when it is on a loopback alias of a loopback
 * `baseUrl` (the canonical spelling of an aliased URL); otherwise `url` unchanged.
 */
export function canonicalLoopbackUrl(url: string, baseUrl: string): string {
  const own = new URL(baseUrl);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.origin === own.origin || parsed.protocol !== own.protocol) return url;
  if (parsed.username || parsed.password || !isLoopbackHostname(own.hostname)) return url;
  if (!isOwnAuthority(parsed.host, own)) return url;
  return `${own.origin}${parsed.pathname}${parsed.search}${parsed.hash}`;
}
