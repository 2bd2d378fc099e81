/** @jsxImportSource hono/jsx */
/**
 * The consent page of the MCP authorization flow (`/oauth/authorize`): a signed-in user sees which
 * application asks, where it will return, and in which team it will act, then allows or denies.
 * Every parameter is checked again when the form comes back: the hidden fields are not trusted.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { AppEnv } from "../api/mod.ts";
import {
  approveAuthorization,
  type AuthorizationRequest,
  checkAuthorizationRequest,
  errorRedirect,
} from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { form, page } from "./guard.tsx";
import { Csrf, Layout } from "./layout.tsx";
import type { UiUser } from "./session.ts";

/** The parameters of an authorization request carried through the consent form. */
const REQUEST_PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "state",
  "scope",
  "code_challenge",
  "code_challenge_method",
  "resource",
] as const;

function pick(source: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of REQUEST_PARAMS) if (source[k] !== undefined) out[k] = source[k];
  return out;
}

/** The CSP source that lets the consent form's redirect reach the client (form-action). */
function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}

/**
 * Widens the page's `form-action` to the client's redirect target: browsers apply form-action to
 * the redirect that follows a form post, and the consent form's answer redirects to the client.
 * Mounted in front of the UI's security headers, so it edits the header they set.
 */
export function consentFormAction(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const extra = c.res.headers.get("x-consent-form-action");
    if (!extra) return;
    c.res.headers.delete("x-consent-form-action");
    const csp = c.res.headers.get("content-security-policy");
    if (csp) {
      c.res.headers.set(
        "content-security-policy",
        csp.replace(/form-action 'self'/, `form-action 'self' ${extra}`),
      );
    }
  };
}

function errorPage(c: Context<AppEnv>, user: UiUser, message: string) {
  return c.html(
    <Layout title="Cannot connect" user={user}>
      <div class="card narrow">
        <h1 data-testid="consent-error">This application cannot be connected</h1>
        <p>{message}</p>
      </div>
    </Layout>,
    400,
  );
}

function consentPage(c: Context<AppEnv>, user: UiUser, request: AuthorizationRequest) {
  const name = request.client.client_name ?? "An unnamed application";
  const target = new URL(request.redirectUri);
  const where = target.protocol === "http:" || target.protocol === "https:"
    ? target.host
    : `${target.protocol}//`;
  const hidden = pick({
    response_type: "code",
    client_id: request.client.client_id,
    redirect_uri: request.redirectUri,
    state: request.state,
    scope: request.scope,
    code_challenge: request.codeChallenge,
    code_challenge_method: "S256",
    resource: request.resource,
  });
  const fields = Object.entries(hidden).map(([k, v]) => (
    <input key={k} type="hidden" name={k} value={v} />
  ));
  c.header("x-consent-form-action", formActionSource(request.redirectUri));
  return c.html(
    <Layout title="Connect an application" user={user}>
      <div class="card narrow">
        <h1>Connect an MCP client?</h1>
        <p>
          <strong data-testid="consent-client">{name}</strong>{" "}
          <span class="muted">(the name is the application's own claim)</span>{" "}
          asks to use this cloud's MCP server as <strong>{user.user.email}</strong>.
        </p>
        <p>
          It will be able to read and change what you can in the team below: gateways, pipelines,
          their parts and transforms. It cannot see your password or API tokens. You can revoke it
          at any time on the API tokens page.
        </p>
        <p>
          After you decide, the browser returns to{" "}
          <code data-testid="consent-redirect">{where}</code>.
        </p>
        <form method="post" action="/oauth/authorize">
          <Csrf token={user.session.csrf} />
          {fields}
          <label for="consent-team">Team</label>
          <select id="consent-team" name="team_id" data-testid="consent-team">
            {user.teams.map((t) => (
              <option value={t.team.id} selected={t.team.id === user.team.id}>{t.team.name}</option>
            ))}
          </select>
          <div class="row">
            <button type="submit" name="decision" value="allow">Allow</button>
            <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
          </div>
        </form>
      </div>
    </Layout>,
  );
}

/** Mounts `GET` and `POST /oauth/authorize`. */
export function mountOAuthPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/oauth/authorize",
    page(s, async (c, user) => {
      const check = await checkAuthorizationRequest(s, pick(c.req.query()));
      if (check.ok) return consentPage(c, user, check.request);
      if ("page" in check) return errorPage(c, user, check.page);
      return c.redirect(check.redirect, 302);
    }),
  );
  ui.post(
    "/oauth/authorize",
    form(s, async (c, user, f) => {
      const check = await checkAuthorizationRequest(s, pick(f));
      if (!check.ok) {
        return "page" in check ? errorPage(c, user, check.page) : c.redirect(check.redirect, 303);
      }
      const { request } = check;
      if (f.decision !== "allow") {
        return c.redirect(
          errorRedirect(s, request.redirectUri, request.state, "access_denied", "the user denied"),
          303,
        );
      }
      const chosen = user.teams.find((t) => t.team.id === f.team_id);
      if (!chosen) return errorPage(c, user, "Pick one of your teams.");
      return c.redirect(await approveAuthorization(s, request, user.user, chosen.team), 303);
    }),
  );
}
