/**
 * DNS-rebinding protection: Host and Origin must name the service's own public base URL. A service
 * whose base URL is a loopback address also answers its loopback aliases on the same port
 * (`localhost`, `127.0.0.1`, `[::1]`): a client on the same machine may name it either way, and
 * no other host can reach a loopback listener to rebind it.
 */
import type { Context } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { ApiError } from "../api/mod.ts";

/** True for `localhost`, 127.0.0.0/8 and `[::1]` (as URL host names write them). */
function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === "localhost" || h === "[::1]" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The port of `url`, the scheme's default when it names none. */
function portOf(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

/** True when `authority` (`host[:port]`) names the service at `own`. */
export function isOwnAuthority(authority: string, own: URL): boolean {
  if (authority.toLowerCase() === own.host.toLowerCase()) return true;
  if (!isLoopback(own.hostname)) return false;
  let other: URL;
  try {
    other = new URL(`${own.protocol}//${authority}`);
  } catch {
    return false;
  }
  if (other.username || other.password || other.pathname !== "/" || other.search) return false;
  return isLoopback(other.hostname) && portOf(other) === portOf(own);
}

/** Throws 403 unless Host (or a trusted X-Forwarded-Host) and Origin (when sent) match `baseUrl`. */
export function checkHostAndOrigin(c: Context<AppEnv>, baseUrl: string): void {
  const own = new URL(baseUrl);
  const trusted = c.get("services").options.trustProxy;
  const host = (trusted && c.req.header("x-forwarded-host")) || c.req.header("host");
  if (!host || !isOwnAuthority(host, own)) {
    throw new ApiError(
      403,
      "forbidden_host",
      `Host ${host ?? "(none)"} is not this service's; connect to ${own.origin}/mcp/cloud`,
    );
  }
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== own.origin && !sameLoopbackOrigin(origin, own)) {
    throw new ApiError(403, "forbidden_origin", `Origin ${origin} is not allowed`);
  }
}

/** An Origin of the same scheme whose authority is a loopback alias of a loopback `own`. */
function sameLoopbackOrigin(origin: string, own: URL): boolean {
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  return o.origin === origin && o.protocol === own.protocol && isOwnAuthority(o.host, own);
}
