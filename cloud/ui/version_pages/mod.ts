/**
 * A gateway's configuration versions: the history (when each was generated, from what, when the
 * gateway applied it), the diff between any two, a rollback to one (the gateway is pinned to that
 * version's snapshot and pulls it as a new version), and resuming to follow the records again.
 * Also the gateway's uploaded configuration for download with the session (the API needs a token).
 *
 * One file per page or form: its route beside its handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { AppEnv } from "../../api/mod.ts";
 * import type { Services } from "../../services.ts";
 * import { mountVersionPages } from "./mod.ts";
 *
 * // The pages are routes of the UI app; the services are used per request, not when mounting.
 * const ui = new Hono<AppEnv>();
 * mountVersionPages(ui, {} as Services);
 * console.log(ui.routes.some((r) => r.method === "GET" && r.path === "/gateways/:id/versions")); // true
 * ```
 *
 * @module
 */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Services } from "../../services.ts";
import { mountVersionHistory } from "./history.tsx";
import { mountRollback } from "./rollback.tsx";
import { mountResume } from "./resume.tsx";
import { mountReportedConfig } from "./reported_config.tsx";

/** Mounts `/gateways/:id/versions` and its forms, and `/gateways/:id/reported-config`. */
export function mountVersionPages(ui: Hono<AppEnv>, s: Services): void {
  mountVersionHistory(ui, s);
  mountRollback(ui, s);
  mountResume(ui, s);
  mountReportedConfig(ui, s);
}
