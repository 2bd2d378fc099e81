/** @jsxImportSource hono/jsx */
/** Sign up, sign in, sign out. */
import type { Context } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { spend } from "../api/mod.ts";
import { dummyHash, hashPassword, needsRehash, verifyPassword } from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { StoreError } from "../store/mod.ts";
import { createUser, MIN_PASSWORD_LENGTH, newUser } from "../users.ts";
import { Csrf, Flash, Layout } from "./layout.tsx";
import { clientIp } from "../api/mod.ts";
import {
  csrfOk,
  currentUser,
  preSessionCsrf,
  readForm,
  safeNext,
  signIn,
  signOut,
} from "./session.ts";
import type { Hono } from "hono";

let dummy: Promise<string> | undefined;

function signInPage(
  c: Context<AppEnv>,
  s: Services,
  opts: { error?: string; email?: string; next?: string },
) {
  return c.html(
    <Layout title="Sign in">
      <div class="card narrow">
        <h1>Sign in</h1>
        <Flash kind="error" message={opts.error} />
        <form method="post" action="/sign-in">
          <Csrf token={preSessionCsrf(c, s)} />
          <input type="hidden" name="next" value={safeNext(opts.next)} />
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            value={opts.email ?? ""}
          />
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
          />
          <p>
            <button type="submit">Sign in</button>
          </p>
        </form>
        {s.options.signup && (
          <p class="muted">
            No account?{" "}
            <a href={`/sign-up?next=${encodeURIComponent(safeNext(opts.next))}`}>Sign up</a>
          </p>
        )}
      </div>
    </Layout>,
    opts.error ? 400 : 200,
  );
}

function signUpPage(
  c: Context<AppEnv>,
  s: Services,
  opts: { error?: string; form?: Record<string, string>; next?: string },
) {
  const f = opts.form ?? {};
  return c.html(
    <Layout title="Sign up">
      <div class="card narrow">
        <h1>Create an account</h1>
        <Flash kind="error" message={opts.error} />
        <form method="post" action="/sign-up">
          <Csrf token={preSessionCsrf(c, s)} />
          <input type="hidden" name="next" value={safeNext(opts.next)} />
          <label for="name">Name</label>
          <input id="name" name="name" required value={f.name ?? ""} />
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            value={f.email ?? ""}
          />
          <label for="password">Password (at least {MIN_PASSWORD_LENGTH} characters)</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="new-password"
            required
            minlength={MIN_PASSWORD_LENGTH}
          />
          <label for="team">Team name</label>
          <input id="team" name="team" placeholder="e.g. Radiology" value={f.team ?? ""} />
          <p>
            <button type="submit">Create account</button>
          </p>
        </form>
        <p class="muted">
          Have an account? <a href="/sign-in">Sign in</a>
        </p>
      </div>
    </Layout>,
    opts.error ? 400 : 200,
  );
}

/** Mounts the sign-in, sign-up and sign-out pages. */
export function mountAuthPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get("/", async (c) => c.redirect((await currentUser(c, s)) ? "/gateways" : "/sign-in"));

  ui.get("/sign-in", async (c) => {
    if (await currentUser(c, s)) return c.redirect(safeNext(c.req.query("next")));
    return signInPage(c, s, { next: c.req.query("next") });
  });

  ui.post("/sign-in", async (c) => {
    spend(c, `sign-in:${clientIp(c)}`, s.options.rateLimits.signInPerIp);
    const form = await readForm(c);
    if (!csrfOk(c, s, form, null)) {
      return signInPage(c, s, { error: "The form expired; please try again.", next: form.next });
    }
    const email = (form.email ?? "").trim().toLowerCase();
    const user = email ? await s.store.identity.userByEmail(email) : null;
    const hash = user?.password_hash ?? await (dummy ??= dummyHash(s.options.passwordIterations));
    const ok = await verifyPassword(form.password ?? "", hash);
    if (!user || !ok) {
      return signInPage(c, s, { error: "Wrong email or password.", email, next: form.next });
    }
    if (needsRehash(user.password_hash, s.options.passwordIterations)) {
      await s.store.identity.setPasswordHash(
        user.id,
        await hashPassword(form.password, s.options.passwordIterations),
      );
    }
    await signIn(c, s, user.id);
    return c.redirect(safeNext(form.next), 303);
  });

  ui.get("/sign-up", async (c) => {
    if (!s.options.signup) {
      return c.html(
        <Layout title="Sign up">
          <div class="card narrow">
            <h1>Sign-up is turned off</h1>
            <p>Ask an administrator for an account.</p>
          </div>
        </Layout>,
        404,
      );
    }
    if (await currentUser(c, s)) return c.redirect("/gateways");
    return signUpPage(c, s, { next: c.req.query("next") });
  });

  ui.post("/sign-up", async (c) => {
    if (!s.options.signup) return c.text("sign-up is turned off", 404);
    spend(c, `sign-in:${clientIp(c)}`, s.options.rateLimits.signInPerIp);
    const form = await readForm(c);
    if (!csrfOk(c, s, form, null)) {
      return signUpPage(c, s, { error: "The form expired; please try again.", form });
    }
    const parsed = newUser.safeParse({
      email: (form.email ?? "").trim(),
      name: form.name ?? "",
      password: form.password ?? "",
      team: form.team?.trim() || undefined,
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return signUpPage(c, s, {
        error: `${issue.path.join(".")}: ${issue.message}`,
        form,
        next: form.next,
      });
    }
    try {
      const { user } = await createUser(s, parsed.data);
      await signIn(c, s, user.id);
    } catch (err) {
      if (err instanceof StoreError && err.code === "name_taken") {
        return signUpPage(c, s, {
          error: "An account with this email already exists.",
          form,
          next: form.next,
        });
      }
      throw err;
    }
    return c.redirect(safeNext(form.next), 303);
  });

  ui.post("/sign-out", async (c) => {
    const user = await currentUser(c, s);
    const form = await readForm(c);
    if (user && csrfOk(c, s, form, user)) await signOut(c, s);
    return c.redirect("/sign-in", 303);
  });
}
