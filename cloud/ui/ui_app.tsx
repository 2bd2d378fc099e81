/** @jsxImportSource hono/jsx */
/** The web UI as a Hono sub-app: security headers, same-origin forms, pages, HTML errors. */
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../api/mod.ts";
import { ApiError, toApiError } from "../api/mod.ts";
import type { Services } from "../services.ts";
import { mountAuditPages } from "./audit_pages.tsx";
import { mountAuthPages } from "./auth_pages.tsx";
import { mountDevicePages } from "./device_pages.tsx";
import { mountGatewayPages } from "./gateway_pages/mod.ts";
import { mountInvitationPages } from "./invitation_pages.tsx";
import { Layout } from "./layout.tsx";
import { consentFormAction, mountOAuthPages } from "./oauth_pages.tsx";
import { mountPipelinePages } from "./pipeline_pages/mod.ts";
import { FAVICON_SVG, htmxScript } from "./assets.ts";
import { mountFleetPage } from "./fleet_pages.tsx";
import { mountPipelineBuilder } from "./pipeline_builder.tsx";
import { mountResourcePages } from "./resource_pages.tsx";
import { mountTransformEditor } from "./transform_editor.tsx";
import { mountVersionPages } from "./version_pages/mod.ts";
import { sameOrigin } from "./session.ts";
import { STYLESHEET } from "./style.ts";
import { mountTeamPages } from "./team_pages.tsx";
import { mountTokenPages } from "./token_pages.tsx";

/** The paths of the UI's pages (for the app's 404 handling and the docs). */
export const UI_PATHS = [
  "/",
  "/sign-in",
  "/sign-up",
  "/sign-out",
  "/device",
  "/teams",
  "/invitations",
  "/tokens",
  "/gateways",
  "/pipelines",
  "/audit",
  "/oauth/authorize",
  "/fleet",
  "/endpoints",
  "/middleware",
  "/transforms",
  "/backends",
  "/services",
  "/networks",
  "/assets",
  "/favicon.svg",
  "/favicon.ico",
];

/** The UI as a Hono sub-app. */
export function createUi(s: Services): Hono<AppEnv> {
  const ui = new Hono<AppEnv>();
  // Before the security headers: it edits the policy they set (see consentFormAction).
  ui.use("/oauth/authorize", consentFormAction());
  ui.use(
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
      strictTransportSecurity: s.options.baseUrl.startsWith("https://")
        ? "max-age=31536000; includeSubDomains"
        : false,
      referrerPolicy: "same-origin",
    }),
  );
  ui.use("*", sameOrigin(s));
  ui.get("/ui.css", (c) => {
    c.header("Cache-Control", "public, max-age=3600");
    return c.body(STYLESHEET, 200, { "Content-Type": "text/css; charset=utf-8" });
  });
  ui.get("/assets/htmx.min.js", (c) => {
    c.header("Cache-Control", "public, max-age=86400");
    return c.body(htmxScript() as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
    });
  });
  for (const path of ["/favicon.svg", "/favicon.ico"]) {
    ui.get(path, (c) => {
      c.header("Cache-Control", "public, max-age=86400");
      return c.body(FAVICON_SVG, 200, { "Content-Type": "image/svg+xml" });
    });
  }
  mountAuthPages(ui, s);
  mountDevicePages(ui, s);
  mountOAuthPages(ui, s);
  mountTeamPages(ui, s);
  mountInvitationPages(ui, s);
  mountTokenPages(ui, s);
  // Before the gateway and pipeline pages: `/gateways/new` must not reach `/gateways/:id`.
  mountResourcePages(ui, s);
  mountTransformEditor(ui, s);
  mountPipelineBuilder(ui, s);
  mountVersionPages(ui, s);
  mountFleetPage(ui, s);
  mountGatewayPages(ui, s);
  mountPipelinePages(ui, s);
  mountAuditPages(ui, s);
  ui.onError((err, c) => {
    const api = toApiError(err) ??
      new ApiError(500, "internal_error", "an unexpected error occurred; it was logged");
    if (api.status === 500) {
      s.options.logger.error("unhandled UI error", {
        request_id: c.get("requestId"),
        path: c.req.path,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      });
    }
    for (const [k, v] of Object.entries(api.headers ?? {})) c.header(k, v);
    return c.html(
      <Layout title="Error">
        <div class="card narrow">
          <h1>{api.status === 429 ? "Too many attempts" : "Something went wrong"}</h1>
          <p>{api.message}</p>
          <p class="muted">Request id: {c.get("requestId")}</p>
        </div>
      </Layout>,
      api.status,
    );
  });
  return ui;
}
