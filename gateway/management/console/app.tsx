/** @jsxImportSource hono/jsx */
/**
 * The operations console as a Hono sub-app of the management API, mounted at
 * `/{prefix}/console` ahead of the API's bearer-token guard: browsers cannot send that header, so
 * the console has its own front door. Every answer carries a strict content security policy
 * (scripts from this origin only, no inline script or style), `frame-ancestors 'none'` and
 * `no-store`; `Host` is checked as the API checks it (DNS rebinding); pages need a session opened
 * with the management token; every POST needs the session's CSRF token and must not come from
 * another site.
 */
import { dirname } from "node:path";
import { type Context, Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { Buffer } from "node:buffer";
import type { Logger } from "../../../shared/mod.ts";
import type { TrackingActor, TrackingPage } from "../../tracking/mod.ts";
import { type RequestFeed, requestFeed } from "../../pipeline/mod.ts";
import type { GatewayControl } from "../control.ts";
import { callerFor, type GuardSettings, hostAllowed } from "../guard.ts";
import { instanceInfo } from "../info.ts";
import type { ManagementEnv } from "../request_context.ts";
import { type ManagementCaller, roleAllows } from "../roles.ts";
import { normalizePrefix, pathOf } from "../routing.ts";
import { CONSOLE_SCRIPT, FAVICON_SVG, htmxScript } from "./assets.ts";
import { configuredCertificates } from "./certificates.ts";
import { type DeadLetterBody, deadLetterBody } from "./dead_letter_content.ts";
import { type DashboardData, DashboardPage } from "./dashboard.tsx";
import {
  type DeadLetter,
  DeadLetterPage,
  DeadLettersPage,
  PAGE_SIZE,
  withLineEndings,
} from "./dead_letters.tsx";
import { HealthPage } from "./health.tsx";
import { EditPage, MessagePage, messageSearch, MessagesPage, timeOf } from "./messages.tsx";
import type { PageContext } from "./layout.tsx";
import { LoginPage, RefusedPage, safeNext } from "./login.tsx";
import { RateSampler } from "./rates.ts";
import {
  clearSessionCookie,
  type ConsoleAccess,
  type ConsoleSession,
  ConsoleSessions,
  crossSiteReason,
  DEFAULT_SESSION_LIMITS,
  MAX_FORM_BYTES,
  preSessionCsrf,
  preSessionCsrfOk,
  readForm,
  sameSecret,
  sessionCookie,
  type SessionLimits,
  setSessionCookie,
  sha256Hex,
  SignInLimiter,
} from "./session.ts";
import { STYLESHEET } from "./style.ts";
import { tailFilter, TailPage } from "./tail.tsx";
import { TailStreams } from "./tail_stream.ts";

/** What the console reads and acts on. */
export interface ConsoleOptions {
  control: GatewayControl;
  logger: Logger;
  /**
   * The management API's tokens and accepted host names, read at each request (a reload may
   * rotate a token): a token typed at sign-in is checked against them, and a session lasts while
   * its token is still one of them (with the role it has now).
   */
  guard: GuardSettings;
  /** The requests feed of the live tail and the last errors (default: this isolate's). */
  feed?: RequestFeed;
  /** Session limits (tests). */
  sessionLimits?: SessionLimits;
  /** The clock of sessions and rates (tests). */
  now?: () => number;
}

/** What a management role may do in the console (docs/management-api.md, "Roles"). */
export function accessOf(caller: ManagementCaller): ConsoleAccess {
  return {
    name: caller.name,
    subject: caller.name === "admin" ? "management token" : `token ${caller.name}`,
    role: caller.role,
    viewContent: roleAllows(caller.role, "operator"),
    operate: roleAllows(caller.role, "operator"),
  };
}

/** The console's path under a management prefix: `/{prefix}/console`. */
export function consolePath(prefix: string): string {
  const p = normalizePrefix(prefix);
  return p ? `/${p}/console` : "/console";
}

/** What the console's pages see of the management app's request. */
type ConsoleEnv = { Bindings: { requestId: string } };
type C = Context<ConsoleEnv>;

/** Serves one request of the management app whose path is under the console's. */
export type ConsoleHandler = (c: Context<ManagementEnv>) => Promise<Response>;

/**
 * The console: a handler for the management app's requests under `/{prefix}/console` (its
 * routes see the path below that, whatever the prefix of the moment).
 */
export function createConsole(options: ConsoleOptions): ConsoleHandler {
  const { control, logger } = options;
  const now = options.now ?? Date.now;
  const limits = options.sessionLimits ?? DEFAULT_SESSION_LIMITS;
  const sessions = new ConsoleSessions(limits, now);
  const signIns = new SignInLimiter(20, 60_000, now);
  const feed = options.feed ?? requestFeed;
  const streams = new TailStreams(feed, () => control.ready());
  const sampler = new RateSampler();
  const { guard } = options;
  const authenticate = (token: string): ConsoleAccess | null => {
    const caller = callerFor(guard, token);
    return caller ? accessOf(caller) : null;
  };
  /** The access a session's token (by its digest) has now, or null when it is no longer valid. */
  const revalidate = (digest: string): ConsoleAccess | null => {
    let found: ConsoleAccess | null = null;
    if (sameSecret(digest, sha256Hex(guard.token()))) {
      found = accessOf({ name: "admin", role: "admin" });
    }
    for (const t of guard.tokens?.() ?? []) {
      if (!found && sameSecret(digest, sha256Hex(t.token))) found = accessOf(t);
    }
    return found;
  };

  const base = () => consolePath(control.config().management.prefix);
  const gatewayName = () => {
    const cloud = control.cloud?.info();
    return cloud?.gateway_code || Deno.hostname();
  };
  const ctxOf = (session: ConsoleSession | null): PageContext => ({
    base: base(),
    session,
    gateway: gatewayName(),
  });
  const sessionOf = (c: C) => sessions.get(sessionCookie(c), revalidate);
  /** Who acts, as message tracking's audit records name them. */
  const actorOf = (c: C, session: ConsoleSession): TrackingActor => ({
    name: session.access.name,
    role: session.access.role,
    request_id: c.env.requestId,
  });

  const app = new Hono<ConsoleEnv>({
    getPath: (req) => {
      const path = pathOf(req.url);
      const b = base();
      return path === b ? "/" : path.startsWith(b + "/") ? path.slice(b.length) : path;
    },
  });
  app.use(
    "*",
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        connectSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      strictTransportSecurity: false,
      referrerPolicy: "same-origin",
      crossOriginResourcePolicy: "same-origin",
    }),
  );
  // The API's DNS-rebinding check; then POSTs from another site are refused outright.
  app.use("*", async (c, next) => {
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    if (!hostAllowed(host, guard.allowedHosts())) {
      return c.text(
        `Host ${JSON.stringify(host)} is not this gateway: use its IP address, localhost, or add ` +
          "the name to [management] allowed_hosts",
        403,
      );
    }
    if (c.req.method === "POST") {
      const why = crossSiteReason(c);
      if (why) {
        logger.warn("console: cross-site form refused", { reason: why });
        return c.html(
          <RefusedPage
            ctx={ctxOf(null)}
            title="Refused"
            message={`Forms of this console are accepted from its own pages only (${why}).`}
          />,
          403,
        );
      }
    }
    await next();
  });

  // Assets: no session needed (the sign-in page uses them); cached for an hour.
  const asset = (body: string | Uint8Array, type: string) => (c: C) => {
    c.header("Cache-Control", "private, max-age=3600");
    return c.body(body as Uint8Array<ArrayBuffer>, 200, { "Content-Type": type });
  };
  app.get("/assets/console.css", (c) => asset(STYLESHEET, "text/css; charset=utf-8")(c));
  app.get("/assets/console.js", (c) => asset(CONSOLE_SCRIPT, "text/javascript; charset=utf-8")(c));
  app.get("/assets/htmx.min.js", (c) => {
    let script: Uint8Array;
    try {
      script = htmxScript();
    } catch (err) {
      // Every page works without it: say so once per request, do not fail the page.
      logger.warn("console: htmx is not installed with this gateway; pages work without it", {
        error: (err as Error).message,
      });
      return c.text("htmx is not available", 404);
    }
    return asset(script, "text/javascript; charset=utf-8")(c);
  });
  app.get("/assets/favicon.svg", (c) => asset(FAVICON_SVG, "image/svg+xml")(c));

  /** A page that needs a session: without one, the sign-in page (htmx: a full redirect). */
  const page =
    (fn: (c: C, ctx: PageContext, s: ConsoleSession) => Response | Promise<Response>) =>
    async (c: C) => {
      const session = sessionOf(c);
      if (!session) {
        const url = new URL(c.req.url);
        const to = `${base()}/login?next=${encodeURIComponent(url.pathname + url.search)}`;
        if (c.req.header("hx-request")) return c.body(null, 204, { "HX-Redirect": to });
        return c.redirect(to, 303);
      }
      return await fn(c, ctxOf(session), session);
    };

  /** A form POST: a session, its CSRF token, and (`operate`) the right to act. */
  const action = (
    needs: "session" | "operate",
    fn: (c: C, ctx: PageContext, s: ConsoleSession, form: URLSearchParams) => Promise<Response>,
  ) =>
  async (c: C) => {
    const session = sessionOf(c);
    if (!session) return c.redirect(`${base()}/login`, 303);
    const ctx = ctxOf(session);
    const form = await readForm(c);
    if (!form) {
      return c.html(
        <RefusedPage
          ctx={ctx}
          title="Too large"
          message={`The form is larger than ${MAX_FORM_BYTES} bytes.`}
        />,
        413,
      );
    }
    if (!sameSecret(form.get("_csrf") ?? "", session.csrf)) {
      return c.html(
        <RefusedPage
          ctx={ctx}
          title="The form could not be accepted"
          message="It expired or did not come from this console. Go back, reload the page and try again."
        />,
        403,
      );
    }
    if (needs === "operate" && !session.access.operate) {
      // Refused with who asked, in the audit trail as the API's refusals are.
      const path = new URL(c.req.url).pathname;
      logger.warn("management call refused by role", {
        actor: session.access.name,
        role: session.access.role,
        needs: "operator",
        method: c.req.method,
        path,
      });
      control.tracking?.recordAct(
        "management.refused",
        { name: session.access.name, role: session.access.role },
        "",
        { method: c.req.method, path, status: 403 },
      ).catch(() => {});
      return c.html(
        <RefusedPage
          ctx={ctx}
          title="Not allowed"
          message={`The ${session.access.role} role may look but not act: sign in with an operator's token.`}
        />,
        403,
      );
    }
    return await fn(c, ctx, session, form);
  };

  // Sign-in and sign-out.
  app.get("/login", (c) => {
    const ctx = ctxOf(null);
    const next = safeNext(c.req.query("next"), ctx.base);
    if (sessionOf(c)) return c.redirect(next, 303);
    return c.html(<LoginPage ctx={ctx} csrf={preSessionCsrf(c)} next={next} />);
  });
  app.post("/login", async (c) => {
    const ctx = ctxOf(null);
    const form = await readForm(c) ?? new URLSearchParams();
    const next = safeNext(form.get("next"), ctx.base);
    if (!preSessionCsrfOk(c, form.get("_csrf") ?? undefined)) {
      return c.html(
        <LoginPage
          ctx={ctx}
          csrf={preSessionCsrf(c)}
          next={next}
          error="The form expired: sign in again."
        />,
        403,
      );
    }
    const wait = signIns.retryAfterSecs();
    if (wait > 0) {
      c.header("Retry-After", String(wait));
      return c.html(
        <LoginPage
          ctx={ctx}
          csrf={preSessionCsrf(c)}
          next={next}
          error={`Too many failed sign-ins: try again in ${wait} s.`}
        />,
        429,
      );
    }
    const token = (form.get("token") ?? "").trim();
    const access = token ? authenticate(token) : null;
    if (!access) {
      signIns.failed();
      logger.warn("console: sign-in refused (not a valid management token)");
      return c.html(
        <LoginPage
          ctx={ctx}
          csrf={preSessionCsrf(c)}
          next={next}
          error="That is not a valid management token."
        />,
        401,
      );
    }
    const { id } = sessions.open(access, sha256Hex(token));
    setSessionCookie(c, id, limits);
    logger.info("console: signed in", { subject: access.subject, role: access.role });
    return c.redirect(next, 303);
  });
  app.post(
    "/logout",
    action("session", (c, ctx, session) => {
      sessions.close(sessionCookie(c));
      clearSessionCookie(c);
      logger.info("console: signed out", { subject: session.access.subject });
      return Promise.resolve(c.redirect(`${ctx.base}/login`, 303));
    }),
  );

  // Dashboard.
  const dashboard = page(async (c, ctx) => {
    await control.collectMetrics?.();
    const summary = control.metrics.summary();
    const at = now();
    const data: DashboardData = {
      pipelines: control.pipelines(),
      summary,
      rates: sampler.rates(summary, at, control.startedAt.getTime()),
      queues: control.queues?.stats() ?? [],
      lastErrors: new Map(feed.lastErrors().map((e) => [e.pipeline, e])),
      uptimeSecs: Math.max(0, (at - control.startedAt.getTime()) / 1000),
      ready: control.ready(),
    };
    return c.html(<DashboardPage ctx={ctx} data={data} />);
  });
  app.get("/", dashboard);

  // Health.
  app.get(
    "/health",
    page(async (c, ctx) => {
      await control.collectMetrics?.();
      const config = control.config();
      const info = instanceInfo(control);
      const baseDir = control.configFile ? dirname(control.configFile) : Deno.cwd();
      const certs = await configuredCertificates(config, baseDir, now());
      return c.html(
        <HealthPage
          ctx={ctx}
          data={{
            info,
            ready: control.ready(),
            degraded: control.degraded?.() ?? [],
            workers: control.workers?.() ??
              [{ index: 0, generation: control.generation?.() ?? 1, requests: 0 }],
            routes: control.routes(),
            cloud: info.cloud,
            certificates: certs.certificates,
            certificateProblems: certs.problems,
            managementTls: Boolean(
              config.management.tls_cert_path && config.management.tls_key_path,
            ),
          }}
        />,
      );
    }),
  );

  // Dead letters.
  app.get(
    "/dead-letters",
    page(async (c, ctx, session) => {
      const stats = control.queues?.stats() ?? [];
      const backend = stats.some((q) => q.backend === c.req.query("backend"))
        ? c.req.query("backend")!
        : "";
      const shown = backend ? stats.filter((q) => q.backend === backend) : stats;
      const total = shown.reduce((n, q) => n + q.dead, 0);
      const pageNo = Math.max(1, Math.min(1000, Number(c.req.query("page")) || 1));
      const skip = (pageNo - 1) * PAGE_SIZE;
      const letters: { backend: string; message: DeadLetter }[] = [];
      let seen = 0;
      for (const q of shown) {
        if (letters.length >= PAGE_SIZE) break;
        if (seen + q.dead <= skip) {
          seen += q.dead;
          continue;
        }
        const queue = control.queues!.get(q.backend);
        if (!queue) continue;
        const from = Math.max(0, skip - seen);
        const list = await queue.list("dead", Math.min(5000, from + PAGE_SIZE));
        for (const m of list.slice(from)) {
          if (letters.length >= PAGE_SIZE) break;
          letters.push({ backend: q.backend, message: m });
        }
        seen += q.dead;
      }
      const requeued = c.req.query("requeued");
      const resentFrom = c.req.query("resent_from") ?? "";
      const resentId = c.req.query("resent") ?? "";
      const deliveryId = /^\d{13}-\d{6}-[0-9a-f]{8}$/;
      return c.html(
        <DeadLettersPage
          ctx={ctx}
          backends={stats.map((q) => ({ name: q.backend, dead: q.dead }))}
          backend={backend}
          letters={letters}
          page={pageNo}
          total={total}
          notice={requeued !== undefined && /^\d{1,9}$/.test(requeued)
            ? `${requeued} dead letter(s) put back in the queue for delivery.`
            : undefined}
          resent={deliveryId.test(resentFrom) && deliveryId.test(resentId)
            ? { from: resentFrom, id: resentId }
            : undefined}
          canRetry={session.access.operate}
        />,
      );
    }),
  );
  app.get(
    "/dead-letters/:backend/:id",
    page(async (c, ctx, session) => {
      const backend = c.req.param("backend") ?? "";
      const queue = control.queues?.get(backend);
      const notFound = () =>
        c.html(
          <RefusedPage
            ctx={ctx}
            title="Not found"
            message={`No dead letter ${c.req.param("id")} in the queue of ${backend}.`}
          />,
          404,
        );
      if (!queue) return notFound();
      let message: DeadLetter;
      try {
        message = await queue.inspect(c.req.param("id") ?? "", "dead");
      } catch {
        return notFound();
      }
      // The tracked message of this delivery, when its pipeline tracks.
      let trackedHref: string | undefined;
      try {
        const found = control.tracking?.search({
          fields: { delivery_id: String(message.id) },
          limit: 1,
        });
        const tracked = found?.messages[0];
        if (tracked) trackedHref = `${ctx.base}/messages/${encodeURIComponent(tracked.id)}`;
      } catch {
        // A store that cannot answer leaves the link out.
      }
      // The body: operators, when asked; audited (who, which letter; never the content).
      let content: DeadLetterBody | undefined;
      let contentError: string | undefined;
      if (c.req.query("content") === "1" && session.access.viewContent) {
        try {
          content = await deadLetterBody(queue, String(message.id));
          await control.tracking?.recordAct(
            "queue.dead_letter_viewed",
            actorOf(c, session),
            String(message.id),
            { backend, pipeline: content.pipeline },
          );
        } catch (err) {
          // Not shown when it cannot be read, or when its view cannot be audited.
          content = undefined;
          contentError = `The content cannot be shown: ${(err as Error).message}`;
        }
      }
      return c.html(
        <DeadLetterPage
          ctx={ctx}
          backend={backend}
          message={message}
          canRetry={session.access.operate}
          canView={session.access.viewContent}
          content={content}
          contentError={contentError}
          trackedHref={trackedHref}
        />,
      );
    }),
  );
  const retry = (one: boolean) =>
    action("operate", async (c, ctx, session) => {
      const backend = c.req.param("backend")!;
      const queue = control.queues?.get(backend);
      const id = one ? c.req.param("id") : undefined;
      if (!queue) {
        return c.html(
          <RefusedPage ctx={ctx} title="Not found" message={`${backend} has no queue.`} />,
          404,
        );
      }
      let moved: number;
      try {
        moved = await queue.retryDead(id);
      } catch (err) {
        const status = (err as { status?: number }).status ?? 500;
        return c.html(
          <RefusedPage ctx={ctx} title="Not retried" message={(err as Error).message} />,
          status === 404 ? 404 : status === 507 ? 507 : 500,
        );
      }
      logger.info("console: dead letters retried", {
        subject: session.access.subject,
        backend,
        ...(id ? { delivery_id: id } : {}),
        requeued: moved,
      });
      return c.redirect(
        `${ctx.base}/dead-letters?${new URLSearchParams({ backend, requeued: String(moved) })}`,
        303,
      );
    });
  app.post("/dead-letters/:backend/retry", retry(false));
  app.post("/dead-letters/:backend/:id/retry", retry(true));
  // A dead letter's text body edited and sent again as a new message (audited, never content).
  app.post(
    "/dead-letters/:backend/:id/resend",
    action("operate", async (c, ctx, session, form) => {
      const backend = c.req.param("backend") ?? "";
      const id = c.req.param("id") ?? "";
      const queue = control.queues?.get(backend);
      if (!queue) {
        return c.html(
          <RefusedPage ctx={ctx} title="Not found" message={`${backend} has no queue.`} />,
          404,
        );
      }
      const text = withLineEndings(form.get("body") ?? "", form.get("eol"));
      const body = new TextEncoder().encode(text);
      const contentType = (form.get("content_type") ?? "").trim().slice(0, 200);
      let newId: string;
      try {
        newId = await queue.resendDead(id, {
          body,
          ...(contentType && /^[\x20-\x7e]*$/.test(contentType)
            ? { content_type: contentType }
            : {}),
        });
        await control.tracking?.recordAct("queue.dead_letter_resent", actorOf(c, session), id, {
          backend,
          new_delivery_id: newId,
          edited_sha256: sha256Hex(text),
          edited_bytes: body.byteLength,
        });
      } catch (err) {
        return failed(c, ctx, "Not resent", err);
      }
      return c.redirect(
        `${ctx.base}/dead-letters?${new URLSearchParams({
          backend,
          resent_from: id,
          resent: newId,
        })}`,
        303,
      );
    }),
  );

  // Live tail.
  const pipelineNames = () => control.pipelines().map((p) => p.name);
  app.get(
    "/tail",
    page((c, ctx) =>
      c.html(
        <TailPage
          ctx={ctx}
          pipelines={pipelineNames()}
          filter={tailFilter((n) => c.req.query(n))}
          seconds={10}
          limit={100}
        />,
      )
    ),
  );
  app.get(
    "/tail/capture",
    page(async (c, ctx) => {
      const filter = tailFilter((n) => c.req.query(n));
      const seconds = Math.max(1, Math.min(30, Math.floor(Number(c.req.query("seconds")) || 10)));
      const limit = Math.max(1, Math.min(500, Math.floor(Number(c.req.query("limit")) || 100)));
      const captured = await streams.capture(filter, seconds, limit, c.req.raw.signal);
      return c.html(
        <TailPage
          ctx={ctx}
          pipelines={pipelineNames()}
          filter={filter}
          captured={captured}
          seconds={seconds}
          limit={limit}
        />,
      );
    }),
  );
  app.get(
    "/tail/events",
    page((c) => {
      const stream = streams.open(tailFilter((n) => c.req.query(n)), c.req.raw.signal);
      if (!stream) {
        return c.text(`at most ${streams.count} live tails may be open at once`, 429, {
          "Retry-After": "10",
        });
      }
      return c.body(stream, 200, {
        "Content-Type": "text/event-stream; charset=utf-8",
        "Cache-Control": "no-store",
        "X-Accel-Buffering": "no",
      });
    }),
  );

  // Messages (message tracking).
  const backendsOf = (pipeline: string) =>
    control.pipelines().find((p) => p.name === pipeline)?.backends.map((b) => b.name) ?? [];
  const missing = (c: C, ctx: PageContext, id: string) =>
    c.html(
      <RefusedPage ctx={ctx} title="Not found" message={`No tracked message ${id}.`} />,
      404,
    );
  const failed = (c: C, ctx: PageContext, title: string, err: unknown) => {
    const status = (err as { status?: number }).status ?? 500;
    if (status >= 500) logger.error("console: " + title, { error: err as Error });
    return c.html(
      <RefusedPage ctx={ctx} title={title} message={(err as Error).message} />,
      status >= 400 && status < 600 ? status as 400 : 500,
    );
  };
  app.get(
    "/messages",
    page((c, ctx) => {
      const tracking = control.tracking;
      const search = messageSearch((n) => c.req.query(n));
      let result: TrackingPage = { messages: [], next_cursor: null };
      let error: string | undefined;
      if (tracking) {
        try {
          result = tracking.search({
            from: timeOf(search.from),
            to: timeOf(search.to),
            ...(search.pipeline ? { pipeline: search.pipeline } : {}),
            ...(search.status ? { status: search.status } : {}),
            ...(search.cursor ? { cursor: search.cursor } : {}),
            fields: Object.fromEntries(search.fields),
            limit: 50,
          });
        } catch (err) {
          error = `The search failed: ${(err as Error).message}`;
        }
      }
      return c.html(
        <MessagesPage
          ctx={ctx}
          status={tracking?.status()}
          search={search}
          pipelines={pipelineNames()}
          messages={result.messages}
          nextCursor={result.next_cursor}
          error={error}
        />,
      );
    }),
  );
  app.get(
    "/messages/:id",
    page(async (c, ctx, session) => {
      const id = c.req.param("id") ?? "";
      const tracking = control.tracking;
      if (!tracking) return missing(c, ctx, id);
      const withContent = c.req.query("content") === "1" && session.access.viewContent;
      let message;
      try {
        message = await tracking.get(id, { withContent, actor: actorOf(c, session) });
      } catch (err) {
        return failed(c, ctx, "The message cannot be shown", err);
      }
      if (!message) return missing(c, ctx, id);
      return c.html(
        <MessagePage
          ctx={ctx}
          message={message}
          withContent={withContent}
          canOperate={session.access.operate}
          backends={backendsOf(message.pipeline)}
        />,
      );
    }),
  );
  app.get(
    "/messages/:id/edit",
    page(async (c, ctx, session) => {
      const id = c.req.param("id") ?? "";
      const tracking = control.tracking;
      if (!tracking) return missing(c, ctx, id);
      if (!session.access.operate) {
        return c.html(
          <RefusedPage
            ctx={ctx}
            title="Not allowed"
            message="Editing and resending needs the operator role."
          />,
          403,
        );
      }
      let message;
      try {
        // The body to edit is a content view: audited like one.
        message = await tracking.get(id, { withContent: true, actor: actorOf(c, session) });
      } catch (err) {
        return failed(c, ctx, "The message cannot be shown", err);
      }
      if (!message) return missing(c, ctx, id);
      const received = message.content?.find((s) => s.stage === "received");
      if (!received) {
        return c.html(
          <RefusedPage
            ctx={ctx}
            title="Nothing to edit"
            message={message.content_error ??
              "Its pipeline did not keep the content as received."}
          />,
          409,
        );
      }
      if (received.truncated || received.view.kind === "binary" || received.view.kind === "dicom") {
        return c.html(
          <RefusedPage
            ctx={ctx}
            title="Not editable here"
            message={received.truncated
              ? "Only the first part of this body was kept: it cannot be resent edited."
              : "A binary or DICOM body is resent edited through the API (body_base64), not as text."}
          />,
          409,
        );
      }
      const body = new TextDecoder().decode(Buffer.from(received.body_base64, "base64"));
      return c.html(
        <EditPage
          ctx={ctx}
          message={message}
          body={body}
          contentType={received.content_type ?? ""}
          backends={backendsOf(message.pipeline)}
        />,
      );
    }),
  );
  const resend = (edited: boolean) =>
    action("operate", async (c, ctx, session, form) => {
      const id = c.req.param("id") ?? "";
      const tracking = control.tracking;
      if (!tracking) return missing(c, ctx, id);
      const backend = form.get("backend") || undefined;
      const contentType = (form.get("content_type") ?? "").trim().slice(0, 200);
      try {
        const outcome = await tracking.replay(
          id,
          {
            ...(backend ? { backend } : {}),
            ...(edited ? { body: new TextEncoder().encode(form.get("body") ?? "") } : {}),
            ...(edited && contentType ? { content_type: contentType } : {}),
          },
          actorOf(c, session),
        );
        const message = await tracking.get(id, {
          withContent: false,
          actor: actorOf(c, session),
        });
        if (!message) return missing(c, ctx, id);
        return c.html(
          <MessagePage
            ctx={ctx}
            message={message}
            withContent={false}
            canOperate
            backends={backendsOf(message.pipeline)}
            outcome={outcome}
          />,
        );
      } catch (err) {
        return failed(c, ctx, edited ? "Not resent" : "Not replayed", err);
      }
    });
  app.post("/messages/:id/replay", resend(false));
  app.post("/messages/:id/resend", resend(true));

  // Anything else under the console: an HTML 404 (never the API's JSON, never its guard).
  app.all(
    "*",
    (c) =>
      c.html(
        <RefusedPage
          ctx={ctxOf(sessionOf(c))}
          title="Not found"
          message="The console has no such page."
        />,
        404,
      ),
  );
  app.onError((err, c) => {
    logger.error("console: page failed", {
      request_id: c.env.requestId,
      path: new URL(c.req.url).pathname,
      error: err,
    });
    return c.html(
      <RefusedPage
        ctx={ctxOf(null)}
        title="Something went wrong"
        message={`The page failed; see the gateway log for request ${c.env.requestId}.`}
      />,
      500,
    );
  });
  return async (c) => await app.fetch(c.req.raw, { requestId: c.get("requestId") });
}
