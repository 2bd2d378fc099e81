/** DNS-rebinding protection: Host and Origin must name the service's own public base URL. */
import type { Context } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { ApiError } from "../api/mod.ts";

/** Throws 403 unless Host (or a trusted X-Forwarded-Host) and Origin (when sent) match `baseUrl`. */
export function checkHostAndOrigin(c: Context<AppEnv>, baseUrl: string): void {
  const own = new URL(baseUrl);
  const trusted = c.get("services").options.trustProxy;
  const host = (trusted && c.req.header("x-forwarded-host")) || c.req.header("host");
  if (!host || host.toLowerCase() !== own.host.toLowerCase()) {
    throw new ApiError(
      403,
      "forbidden_host",
      `Host ${host ?? "(none)"} is not this service's; connect to ${own.origin}/mcp/cloud`,
    );
  }
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== own.origin) {
    throw new ApiError(403, "forbidden_origin", `Origin ${origin} is not allowed`);
  }
}
