/** @jsxImportSource hono/jsx */
/** The sign-in page: the management token, typed into a password field, opens a session. */
import { Flash, Layout, type PageContext } from "./layout.tsx";

/** A local path of the console to go to after sign-in (never another site). */
export function safeNext(next: string | undefined | null, base: string): string {
  if (!next || !next.startsWith(base) || next.startsWith("//") || /[\\\r\n]/.test(next)) {
    return base;
  }
  return next;
}

/** The sign-in form. */
export function LoginPage(
  { ctx, csrf, next, error }: { ctx: PageContext; csrf: string; next: string; error?: string },
) {
  return (
    <Layout title="Sign in" ctx={ctx}>
      <div class="card narrow">
        <h1>Sign in to the console</h1>
        <Flash kind="error" message={error} />
        <p class="muted">
          Use the gateway's management token (from <code>GATEWAY_MANAGEMENT_TOKEN</code>,{" "}
          <code>[management] token_file</code>, or <code>state/management-token</code>).
        </p>
        <form method="post" action={`${ctx.base}/login`}>
          <input type="hidden" name="_csrf" value={csrf} />
          <input type="hidden" name="next" value={next} />
          <label for="token">Management token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="current-password"
            required
            autofocus
          />
          <p>
            <button type="submit">Sign in</button>
          </p>
        </form>
      </div>
    </Layout>
  );
}

/** A page that says why a request was refused (CSRF, cross-site, role, size). */
export function RefusedPage(
  { ctx, title, message }: { ctx: PageContext; title: string; message: string },
) {
  return (
    <Layout title={title} ctx={ctx}>
      <div class="card">
        <h1>{title}</h1>
        <p data-testid="refused-reason">{message}</p>
        <p>
          <a href={ctx.base}>Back to the dashboard</a>
        </p>
      </div>
    </Layout>
  );
}
