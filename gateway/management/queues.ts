/**
 * The delivery queues in the management API: depth, age, in-flight, retries and dead letters per
 * backend; a message's metadata (never its body); dead letters sent again, one or all; dead letters
 * purged, only with the backend's name as confirmation.
 */
import type { Hono } from "hono";
import type { GatewayControl } from "./control.ts";
import type { ManagementEnv } from "./request_context.ts";
import { fail } from "./responses.ts";
import { requireRole } from "./roles.ts";
import { PREFIXED } from "./routing.ts";

/** Adds the `/{prefix}/queues` routes. */
export function queueRoutes(app: Hono<ManagementEnv>, control: GatewayControl): void {
  const queueOf = (backend: string) => control.queues?.get(backend);
  const missing = (c: Parameters<typeof fail>[0], backend: string) =>
    fail(c, 404, "queue_not_found", `backend ${backend} has no delivery queue`);

  app.get(`${PREFIXED}/queues`, (c) => c.json({ queues: control.queues?.stats() ?? [] }));
  app.get(`${PREFIXED}/queues/:backend/messages`, async (c) => {
    const q = queueOf(c.req.param("backend"));
    if (!q) return missing(c, c.req.param("backend"));
    const state = c.req.query("state") ?? "ready";
    if (state !== "ready" && state !== "dead") {
      return fail(c, 400, "invalid_request", "state is ready or dead");
    }
    const limit = Math.min(1000, Math.max(1, Number(c.req.query("limit") ?? 100) || 100));
    return c.json({ messages: await q.list(state, limit) });
  });
  app.get(`${PREFIXED}/queues/:backend/messages/:id`, async (c) => {
    const q = queueOf(c.req.param("backend"));
    if (!q) return missing(c, c.req.param("backend"));
    return c.json(await q.inspect(c.req.param("id")));
  });
  app.post(`${PREFIXED}/queues/:backend/retry`, async (c) => {
    const q = queueOf(c.req.param("backend"));
    if (!q) return missing(c, c.req.param("backend"));
    const text = await c.req.text();
    let id: string | undefined;
    if (text.trim() !== "") {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return fail(c, 400, "invalid_json", "the body is not JSON");
      }
      const given = (body as { id?: unknown })?.id;
      if (given !== undefined && typeof given !== "string") {
        return fail(c, 400, "invalid_request", "id is a string (a delivery id)");
      }
      id = given;
    }
    return c.json({ requeued: await q.retryDead(id) });
  });
  app.delete(`${PREFIXED}/queues/:backend/dead`, async (c) => {
    const refused = requireRole(c, "admin");
    if (refused) return refused;
    const backend = c.req.param("backend");
    const q = queueOf(backend);
    if (!q) return missing(c, backend);
    if (c.req.query("confirm") !== backend) {
      return fail(
        c,
        400,
        "confirmation_required",
        `purging deletes every dead letter of ${backend}: repeat the backend's name as ?confirm=${backend}`,
      );
    }
    return c.json({ purged: await q.purgeDead() });
  });
}
