/**
 * DNS-rebinding protection: Host and Origin must name the service's own public base URL. A service
 * whose base URL is a loopback address also answers its loopback aliases on the same port
 * (`localhost`, `127.0.0.1`, `[::1]`): a client on the same machine may name it either way, and a
 * rebinding page sends its own host name, never a loopback name (auth/loopback.ts).
 */
import type { Context } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { ApiError } from "../api/mod.ts";
import { isOwnAuthority } from "../auth/mod.ts";

/** True when an authority names this service (auth/loopback.ts; tests import it from here). */
export { isOwnAuthority };

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
