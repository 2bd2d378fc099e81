/** @jsxImportSource hono/jsx */
/** Page handlers that need a signed-in user, and form handlers that also need a valid CSRF token. */
import type { Context, Handler } from "hono";
import type { AppEnv } from "../api/mod.ts";
import type { Services } from "../services.ts";
import { Layout } from "./layout.tsx";
import { csrfOk, currentUser, readFormParams, type UiUser } from "./session.ts";

type PageFn = (c: Context<AppEnv>, user: UiUser) => Response | Promise<Response>;
type FormFn = (
  c: Context<AppEnv>,
  user: UiUser,
  form: Record<string, string>,
  params: URLSearchParams,
) => Response | Promise<Response>;

/** A GET page: signed-out visitors go to the sign-in page and come back afterwards. */
export function page(s: Services, fn: PageFn): Handler<AppEnv> {
  return async (c) => {
    const user = await currentUser(c, s);
    if (!user) {
      const url = new URL(c.req.url);
      return c.redirect(`/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`);
    }
    c.header("Cache-Control", "no-store");
    return await fn(c, user);
  };
}

/** A form POST: needs a session and the session's CSRF token (403 otherwise). */
export function form(s: Services, fn: FormFn): Handler<AppEnv> {
  return async (c) => {
    const user = await currentUser(c, s);
    if (!user) return c.redirect("/sign-in", 303);
    const params = await readFormParams(c);
    const body = Object.fromEntries(params);
    if (!csrfOk(c, s, body, user)) return forbiddenPage(c, user);
    c.header("Cache-Control", "no-store");
    return await fn(c, user, body, params);
  };
}

/** The answer to a form without a valid CSRF token. */
export function forbiddenPage(
  c: Context<AppEnv>,
  user: UiUser | null,
): Response | Promise<Response> {
  return c.html(
    <Layout title="Forbidden" user={user}>
      <div class="card">
        <h1>The form could not be accepted</h1>
        <p>It expired or did not come from this site. Go back, reload the page and try again.</p>
      </div>
    </Layout>,
    403,
  );
}

/** A page for a record that does not exist in the current team. */
export function notFoundPage(
  c: Context<AppEnv>,
  user: UiUser | null,
  what = "page",
): Response | Promise<Response> {
  return c.html(
    <Layout title="Not found" user={user}>
      <div class="card">
        <h1>Not found</h1>
        <p>This {what} does not exist in your current team.</p>
      </div>
    </Layout>,
    404,
  );
}
