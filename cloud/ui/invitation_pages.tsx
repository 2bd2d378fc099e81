/** @jsxImportSource hono/jsx */
/**
 * Opening an invitation link (`/invitations/accept?code=…`): who invites whom to which team, then
 * Join for the signed-in account with the invited address, or an account made for that address
 * from the link (when sign-up is on). A used, expired, revoked or unknown code is refused and says
 * which. Joining never switches the current team of an existing account.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { clientIp, spend } from "../api/mod.ts";
import { hashPassword } from "../auth/mod.ts";
import type { FoundInvitation } from "../resources/mod.ts";
import type { Services } from "../services.ts";
import { StoreError } from "../store/mod.ts";
import { MIN_PASSWORD_LENGTH, newUser } from "../users.ts";
import { Csrf, Flash, Layout } from "./layout.tsx";
import { csrfOk, currentUser, preSessionCsrf, readForm, signIn, type UiUser } from "./session.ts";

const PATH = "/invitations/accept";

/** The link of the page for `code` (a local path, for sign-in's `next`). */
function here(code: string): string {
  return `${PATH}?code=${encodeURIComponent(code)}`;
}

/** The form that opens an invitation by its code. */
function CodeForm({ code }: { code?: string }) {
  return (
    <form method="get" action={PATH} class="row">
      <div>
        <label for="invitation-code">Invitation code</label>
        <input
          id="invitation-code"
          name="code"
          required
          maxlength={200}
          placeholder="gwi_…"
          value={code ?? ""}
        />
      </div>
      <button type="submit">Open invitation</button>
    </form>
  );
}

/** A refusal: unknown (404), used, expired or revoked (410), another account's (403). */
function refusedPage(c: Context<AppEnv>, user: UiUser | null, err: StoreError, code?: string) {
  const status = err.code === "not_found" ? 404 : err.code === "forbidden" ? 403 : 410;
  return c.html(
    <Layout title="Invitation" user={user}>
      <div class="card narrow">
        <h1>This invitation cannot be used</h1>
        <div role="alert" class="flash flash-error" data-testid="invitation-refused">
          {err.message[0].toUpperCase() + err.message.slice(1)}.
        </div>
        {status === 403 && user && (
          <form method="post" action="/sign-out">
            <Csrf token={user.session.csrf} />
            <p>
              Signed in as {user.user.email}.{" "}
              <button type="submit" class="secondary">Sign out</button>, then open the link again.
            </p>
          </form>
        )}
        {status === 404 && <CodeForm code={code} />}
      </div>
    </Layout>,
    status,
  );
}

/** The invitation: Join for the invited account, or sign in / create the account. */
function invitationPage(
  c: Context<AppEnv>,
  s: Services,
  user: UiUser | null,
  found: FoundInvitation,
  code: string,
  opts: { error?: string; name?: string } = {},
) {
  const r = found.entry.value;
  const mine = user?.user.email === r.email;
  return c.html(
    <Layout title={`Join ${found.team.name}`} user={user}>
      <div class="card narrow">
        <h1>
          Join <span data-testid="invitation-team">{found.team.name}</span>
        </h1>
        <p>
          {r.created_by} invites <strong data-testid="invitation-email">{r.email}</strong>{" "}
          to the team {found.team.name} as {r.role}. The invitation works once, until{" "}
          {r.expires_at.replace("T", " ").slice(0, 16)} UTC.
        </p>
        <Flash kind="error" message={opts.error} />
        {user && mine && (
          <form method="post" action={PATH}>
            <Csrf token={user.session.csrf} />
            <input type="hidden" name="code" value={code} />
            <p>
              <button type="submit">Join {found.team.name}</button>
            </p>
            <p class="muted">Your current team ({user.team.name}) stays until you switch.</p>
          </form>
        )}
        {user && !mine && (
          <form method="post" action="/sign-out">
            <Csrf token={user.session.csrf} />
            <p role="alert">
              You are signed in as {user.user.email}; this invitation is for {r.email}.
            </p>
            <p>
              <button type="submit" class="secondary">Sign out</button>, then open the link again.
            </p>
          </form>
        )}
        {!user && (
          <>
            <p>
              <a class="button" href={`/sign-in?next=${encodeURIComponent(here(code))}`}>
                Sign in as {r.email}
              </a>
            </p>
            {s.options.signup
              ? (
                <form method="post" action={PATH} data-testid="invitation-sign-up">
                  <h2>No account yet? Create it</h2>
                  <Csrf token={preSessionCsrf(c, s)} />
                  <input type="hidden" name="code" value={code} />
                  <p>
                    Email: <strong>{r.email}</strong>
                  </p>
                  <label for="name">Name</label>
                  <input id="name" name="name" required maxlength={100} value={opts.name ?? ""} />
                  <label for="password">
                    Password (at least {MIN_PASSWORD_LENGTH} characters)
                  </label>
                  <input
                    id="password"
                    name="password"
                    type="password"
                    autocomplete="new-password"
                    required
                    minlength={MIN_PASSWORD_LENGTH}
                  />
                  <p>
                    <button type="submit">Create account and join</button>
                  </p>
                </form>
              )
              : (
                <p class="muted">
                  Sign-up is turned off here: ask an administrator for an account for{" "}
                  {r.email}, then sign in and open this link again.
                </p>
              )}
          </>
        )}
      </div>
    </Layout>,
    opts.error ? 400 : 200,
  );
}

/** Mounts `/invitations/accept` (GET: the invitation; POST: join, or create the account). */
export function mountInvitationPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get(PATH, async (c) => {
    const user = await currentUser(c, s);
    c.header("Cache-Control", "no-store");
    const code = (c.req.query("code") ?? "").trim();
    if (!code) {
      return c.html(
        <Layout title="Invitation" user={user}>
          <div class="card narrow">
            <h1>Open an invitation</h1>
            <p>Paste the code of the invitation an owner of the team gave you.</p>
            <CodeForm />
          </div>
        </Layout>,
      );
    }
    try {
      return invitationPage(c, s, user, await s.invitations.usable(code), code);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      return refusedPage(c, user, err, code);
    }
  });

  ui.post(PATH, async (c) => {
    const user = await currentUser(c, s);
    const f = await readForm(c);
    c.header("Cache-Control", "no-store");
    const code = (f.code ?? "").trim();
    if (!csrfOk(c, s, f, user)) {
      return c.html(
        <Layout title="Invitation" user={user}>
          <div class="card narrow">
            <h1>The form could not be accepted</h1>
            <p>
              It expired or did not come from this site.{" "}
              <a href={here(code)}>
                Open the invitation again
              </a>.
            </p>
          </div>
        </Layout>,
        403,
      );
    }
    try {
      if (user) {
        const joined = await s.invitations.accept(user.user, code);
        return joinedPage(c, (await currentUser(c, s))!, joined);
      }
      // A new account for the invited address: the sign-in budget applies as on sign-up.
      spend(c, `sign-in:${clientIp(c)}`, s.options.rateLimits.signInPerIp);
      const found = await s.invitations.usable(code);
      if (!s.options.signup) {
        return invitationPage(c, s, null, found, code, { error: "Sign-up is turned off." });
      }
      const parsed = newUser.pick({ name: true, password: true }).safeParse({
        name: f.name ?? "",
        password: f.password ?? "",
      });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return invitationPage(c, s, null, found, code, {
          error: `${issue.path.join(".")}: ${issue.message}`,
          name: f.name,
        });
      }
      const passwordHash = await hashPassword(parsed.data.password, s.options.passwordIterations);
      try {
        const { user: created } = await s.invitations.acceptNewAccount(code, {
          name: parsed.data.name,
          passwordHash,
        });
        await signIn(c, s, created.id);
      } catch (err) {
        if (!(err instanceof StoreError) || err.code !== "name_taken") throw err;
        return invitationPage(c, s, null, found, code, {
          error: `An account with ${found.entry.value.email} exists already: sign in to accept.`,
          name: f.name,
        });
      }
      return c.redirect("/gateways", 303);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      return refusedPage(c, user, err, code);
    }
  });
}

/** After joining: the team and role, and a switch to it (the current team stays). */
function joinedPage(
  c: Context<AppEnv>,
  user: UiUser,
  joined: { team: { id: string; name: string }; role: string; alreadyMember: boolean },
) {
  return c.html(
    <Layout title={`Joined ${joined.team.name}`} user={user}>
      <div class="card narrow">
        <h1>Joined {joined.team.name}</h1>
        <Flash
          kind="ok"
          message={joined.alreadyMember
            ? `You were a member of ${joined.team.name} already (${joined.role}).`
            : `You are now a ${joined.role} of ${joined.team.name}.`}
        />
        {user.team.id === joined.team.id
          ? <p>It is your current team.</p>
          : (
            <form method="post" action="/teams/switch">
              <Csrf token={user.session.csrf} />
              <input type="hidden" name="team_id" value={joined.team.id} />
              <input type="hidden" name="back" value="/gateways" />
              <p>
                Your current team is still {user.team.name}.{" "}
                <button type="submit">Switch to {joined.team.name}</button>
              </p>
            </form>
          )}
      </div>
    </Layout>,
  );
}
