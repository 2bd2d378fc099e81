/**
 * Web sessions and CSRF. The session cookie is HttpOnly and SameSite=Lax (and `__Host-`, Secure
 * when the base URL is https); its value is never stored, only its hash. Every form carries a CSRF
 * token: the session's own, or, before sign-in, a double-submit token bound to a cookie. POSTs
 * from another origin are refused outright.
 */
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../api/mod.ts";
import { readBytes } from "../api/mod.ts";
import type { Actor, Role, Session, Team, User } from "../store/mod.ts";
import { constantTimeEqual, randomBase64Url } from "../store/mod.ts";
import type { Services } from "../services.ts";

/** The signed-in user of a page. */
export interface UiUser {
  user: User;
  team: Team;
  role: Role;
  teams: { team: Team; role: Role }[];
  session: Session;
  sessionId: string;
  actor: Actor;
}

/** Largest form body, bytes (a transform's JOLT spec and sample input come in a form). */
export const MAX_FORM_BYTES = 256 * 1024;

function secure(s: Services): boolean {
  return s.options.baseUrl.startsWith("https://");
}

/** Name of the session cookie. */
export function sessionCookieName(s: Services): string {
  return secure(s) ? "__Host-gw_session" : "gw_session";
}

function preCsrfCookieName(s: Services): string {
  return secure(s) ? "__Host-gw_csrf" : "gw_csrf";
}

const cookieOptions = (s: Services, maxAge: number) => ({
  httpOnly: true,
  secure: secure(s),
  sameSite: "Lax" as const,
  path: "/",
  maxAge,
});

/** Starts a session for `userId` and sets its cookie. */
export async function signIn(c: Context<AppEnv>, s: Services, userId: string): Promise<void> {
  const { id } = await s.store.sessions.create(userId, s.options.sessionTtlSeconds);
  setCookie(c, sessionCookieName(s), id, cookieOptions(s, s.options.sessionTtlSeconds));
  deleteCookie(c, preCsrfCookieName(s), { path: "/", secure: secure(s) });
}

/** Ends the session and clears its cookie. */
export async function signOut(c: Context<AppEnv>, s: Services): Promise<void> {
  const id = getCookie(c, sessionCookieName(s));
  if (id) await s.store.sessions.delete(id);
  deleteCookie(c, sessionCookieName(s), { path: "/", secure: secure(s) });
}

/** The signed-in user, or null. Repairs a current team the user no longer belongs to. */
export async function currentUser(c: Context<AppEnv>, s: Services): Promise<UiUser | null> {
  const sessionId = getCookie(c, sessionCookieName(s));
  if (!sessionId) return null;
  const session = await s.store.sessions.get(sessionId);
  if (!session) return null;
  let user = await s.store.identity.user(session.user_id);
  if (!user) return null;
  const teams = await s.store.identity.teamsOf(user.id);
  let current = teams.find((t) => t.team.id === user!.current_team_id);
  if (!current) {
    if (!teams.length) return null;
    current = teams[0];
    user = await s.store.identity.switchTeam(user.id, current.team.id);
  }
  return {
    user,
    team: current.team,
    role: current.role,
    teams,
    session,
    sessionId,
    actor: { type: "user", id: user.id, label: user.email, user_id: user.id },
  };
}

/** The CSRF token for forms before sign-in (sets its cookie when missing). */
export function preSessionCsrf(c: Context<AppEnv>, s: Services): string {
  const existing = getCookie(c, preCsrfCookieName(s));
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBase64Url(32);
  setCookie(c, preCsrfCookieName(s), token, { ...cookieOptions(s, 3600), sameSite: "Strict" });
  return token;
}

/**
 * Refuses POSTs whose Origin (or Referer) is not this service, and cross-site fetches. `Origin:
 * null` is refused too: it is what a sandboxed iframe, a `data:` or `file:` page or a
 * cross-origin redirect sends, never a form of this service (which browsers send with its origin),
 * and a page that can make the browser send it must not approve a device login with a stolen
 * CSRF token.
 */
export function sameOrigin(s: Services): MiddlewareHandler<AppEnv> {
  const origin = new URL(s.options.baseUrl).origin;
  return async (c, next) => {
    if (c.req.method === "POST") {
      const site = c.req.header("sec-fetch-site");
      const from = c.req.header("origin") ?? refererOrigin(c.req.header("referer"));
      if (site === "cross-site" || (from !== undefined && from !== origin)) {
        return c.text("cross-origin form posts are refused", 403);
      }
    }
    await next();
  };
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return "invalid";
  }
}

/** Reads a urlencoded form body (at most {@link MAX_FORM_BYTES}). */
export async function readForm(c: Context<AppEnv>): Promise<Record<string, string>> {
  return Object.fromEntries(await readFormParams(c));
}

/** Reads a urlencoded form body with its repeated fields (checkboxes, ordered lists). */
export async function readFormParams(c: Context<AppEnv>): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return new URLSearchParams();
  const bytes = await readBytes(c, MAX_FORM_BYTES);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** True when the form's `_csrf` matches the session's (or the pre-session cookie's) token. */
export function csrfOk(
  c: Context<AppEnv>,
  s: Services,
  form: Record<string, string>,
  user: UiUser | null,
): boolean {
  const sent = form._csrf ?? "";
  const expected = user ? user.session.csrf : getCookie(c, preCsrfCookieName(s)) ?? "";
  return expected.length > 0 && constantTimeEqual(sent, expected);
}

/** A local path to go to after sign-in (never another site). */
export function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) {
    return "/gateways";
  }
  return next;
}
