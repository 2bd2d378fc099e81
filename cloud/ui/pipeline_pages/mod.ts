/**
 * Pipelines (the team's own and those shared with it) and the resources they use.
 *
 * One file per page or form: its route beside its handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { AppEnv } from "../../api/mod.ts";
 * import type { Services } from "../../services.ts";
 * import { mountPipelinePages } from "./mod.ts";
 *
 * // The pages are routes of the UI app; the services are used per request, not when mounting.
 * const ui = new Hono<AppEnv>();
 * mountPipelinePages(ui, {} as Services);
 * console.log(ui.routes.some((r) => r.method === "GET" && r.path === "/pipelines/:id")); // true
 * ```
 *
 * @module
 */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Services } from "../../services.ts";
import { mountPipelineList } from "./list.tsx";
import { mountPipelineDetail } from "./detail.tsx";

/** Mounts `/pipelines` and `/pipelines/:id`. */
export function mountPipelinePages(ui: Hono<AppEnv>, s: Services): void {
  mountPipelineList(ui, s);
  mountPipelineDetail(ui, s);
}
