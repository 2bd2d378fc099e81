/**
 * The management API as a Hono app (served by the runtime with `Deno.serve` on the management
 * bind and port). Routes under `/{prefix}` follow the prefix of the config serving at each request,
 * so a reload that changes `[management] prefix` takes effect without restarting the listener.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { Logger } from "../../shared/mod.ts";
import { GatewayError } from "../errors.ts";
import { CLOUD_OPERATIONS, cloudHandler } from "./cloud.ts";
import { createConsole } from "./console/mod.ts";
import type { GatewayControl } from "./control.ts";
import { allRoutes } from "./dimse_routes.ts";
import { type GuardSettings, managementGuard } from "./guard.ts";
import { instanceInfo } from "./info.ts";
import { queueRoutes } from "./queues.ts";
import { isResendPath, trackingRoutes } from "./tracking_routes.ts";
import { alertRoutes } from "./alerts_routes.ts";
import { type ManagementEnv, requestContext } from "./request_context.ts";
import { requireRole } from "./roles.ts";
import { errorResponse, fail } from "./responses.ts";
import { allowedMethods, normalizePrefix, pathOf, PREFIXED, routingPath } from "./routing.ts";

/** Largest request body accepted by the management API (bytes). */
export const MAX_BODY_BYTES = 64 * 1024;

/** Content type of `GET /metrics` (Prometheus text exposition format 0.0.4). */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The management app type. */
export type ManagementApp = Hono<ManagementEnv>;

/**
 * Build the management API over the running gateway; `guard` holds the bearer token and the
 * accepted host names (see guard.ts for what is refused before any route).
 */
export function createManagementApp(
  control: GatewayControl,
  logger: Logger,
  guard: GuardSettings,
): ManagementApp {
  const currentPrefix = (): string | null => {
    try {
      return normalizePrefix(control.config().management.prefix);
    } catch (err) {
      // getPath runs outside Hono's error handling: never let it throw.
      logger.error("management prefix unavailable", { error: err as Error });
      return null;
    }
  };
  const app = new Hono<ManagementEnv>({
    getPath: (req) => routingPath(pathOf(req.url), currentPrefix()),
  });

  app.use(requestContext(logger));
  // Hono's onError only sees Error instances; anything else thrown would escape app.fetch.
  app.use(async (_c, next) => {
    try {
      await next();
    } catch (err) {
      throw err instanceof Error ? err : new Error(String(err));
    }
  });
  // The operations console (console/): its own front door (sessions, CSRF), ahead of the API's
  // guard, which refuses every browser. Off with `[management] console = false`.
  const consoleHandler = createConsole({ control, logger, guard });
  app.use(`${PREFIXED}/console`, async (c, next) => {
    if (control.config().management.console === false) return await next();
    return await consoleHandler(c);
  });
  app.use(`${PREFIXED}/console/*`, async (c, next) => {
    if (control.config().management.console === false) return await next();
    return await consoleHandler(c);
  });
  // A call a token's role does not allow is answered 403 and recorded in the audit trail with who
  // asked (a viewer asking for a message's content, say), like the operators' acts.
  app.use(managementGuard({
    ...guard,
    onRoleRefused: guard.onRoleRefused ?? ((caller, need, request) => {
      const path = pathOf(request.url);
      logger.warn("management call refused by role", {
        actor: caller.name,
        role: caller.role,
        needs: need,
        method: request.method,
        path,
      });
      control.tracking?.recordAct(
        "management.refused",
        {
          name: caller.name,
          role: caller.role,
        },
        "",
        { method: request.method, path, status: 403 },
      ).catch(() => {});
    }),
  }));
  const limit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) =>
      fail(c, 413, "payload_too_large", `request body exceeds ${MAX_BODY_BYTES} bytes`),
  });
  // An edited resend carries a whole message: its route sets its own limit.
  app.use((c, next) => isResendPath(c.req.path) ? next() : limit(c, next));

  // Liveness: the process answers; nothing else is checked.
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  // Ready while the listeners serve; a degraded component (a queue paused by a full disk) is
  // listed but keeps the gateway ready: everything else it serves still works. A frozen isolate
  // does not: the kernel still gives its listening socket a share of new connections, which hang.
  app.get("/readyz", (c) => {
    if (!control.ready()) return c.json({ status: "not_ready" }, 503);
    const degraded = control.degraded?.() ?? [];
    const unresponsive = control.unresponsiveWorkers?.() ?? [];
    if (unresponsive.length) {
      return c.json({
        status: "not_ready",
        unresponsive_workers: unresponsive,
        ...(degraded.length ? { degraded } : {}),
      }, 503);
    }
    return c.json(degraded.length ? { status: "ready", degraded } : { status: "ready" });
  });
  app.get("/metrics", async (c) => {
    await control.collectMetrics?.();
    return c.body(control.metrics.render(), 200, { "Content-Type": METRICS_CONTENT_TYPE });
  });
  app.post("/api/reload", async (c) => {
    const refused = requireRole(c, "admin");
    if (refused) return refused;
    const outcome = await control.reload("api");
    // 422: the new config was refused; the old one keeps serving.
    return c.json(outcome, outcome.ok ? 200 : 422);
  });

  app.get(`${PREFIXED}/info`, (c) => c.json(instanceInfo(control)));
  app.get(`${PREFIXED}/pipelines`, (c) => c.json({ pipelines: control.pipelines() }));
  app.get(`${PREFIXED}/workers`, async (c) => {
    await control.collectMetrics?.();
    const workers = control.workers?.() ??
      [{ index: 0, generation: control.generation?.() ?? 1, requests: null }];
    return c.json({ workers });
  });
  app.get(
    `${PREFIXED}/routes`,
    (c) => c.json({ routes: allRoutes(control.routes(), control.config()) }),
  );
  for (const op of CLOUD_OPERATIONS) {
    const handler = cloudHandler(control, logger, op);
    app.post(`${PREFIXED}/${op}`, (c) => requireRole(c, "admin") ?? handler(c));
  }
  queueRoutes(app, control);
  trackingRoutes(app, control);
  alertRoutes(app, control);

  const allowed = allowedMethods(app.routes);
  app.notFound((c) => {
    const methods = allowed.get(c.req.path);
    if (methods) {
      return fail(
        c,
        405,
        "method_not_allowed",
        `${c.req.method} is not allowed on ${pathOf(c.req.url)}; allowed: ${methods.join(", ")}`,
        { Allow: methods.join(", ") },
      );
    }
    return fail(c, 404, "not_found", `no management route ${c.req.method} ${pathOf(c.req.url)}`);
  });

  app.onError((err, c) => {
    if (err instanceof GatewayError) return errorResponse(c, err);
    if (err instanceof HTTPException && err.status < 500) {
      const code = err.status === 413 ? "payload_too_large" : "bad_request";
      return fail(c, err.status, code, err.message || "bad request");
    }
    // Unexpected: log the detail, answer without internals.
    logger.error("management request failed", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: pathOf(c.req.url),
      error: err,
      stack: err.stack,
    });
    return fail(
      c,
      500,
      "internal_error",
      "internal error; see the gateway log for this request id",
    );
  });

  return app;
}
