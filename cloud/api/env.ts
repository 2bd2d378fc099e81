/** The Hono environment of the cloud app: per-request variables. */
import type { Principal } from "../auth/mod.ts";
import type { Services } from "../services.ts";

/** Variables set by middleware for the handlers. */
export interface AppVariables {
  requestId: string;
  services: Services;
  principal: Principal;
}

/** Hono env type of the app (`c.env` is Deno's serve-handler info). */
export interface AppEnv {
  Variables: AppVariables;
  Bindings: { remoteAddr?: Deno.NetAddr };
}
