/** @jsxImportSource hono/jsx */
// Rendered once on the server (no client-side reconciliation): list items need no keys.
// deno-lint-ignore-file jsx-key
/** The console's page frame and small components (its own: gateway/ never imports cloud/). */
import type { Child, FC, PropsWithChildren } from "hono/jsx";
import type { ConsoleSession } from "./session.ts";

/** What every page knows: where the console is mounted, and who is signed in. */
export interface PageContext {
  /** The console's path, e.g. `/admin/console`. */
  base: string;
  session: ConsoleSession | null;
  /** The gateway's name in the header (its cloud gateway code, or its host name). */
  gateway: string;
}

/** The pages of the navigation bar, relative to the console's path. */
export const NAV: [string, string][] = [
  ["", "Dashboard"],
  ["/messages", "Messages"],
  ["/dead-letters", "Dead letters"],
  ["/tail", "Live tail"],
  ["/health", "Health"],
];

/** The page frame: header, navigation, sign-out; htmx and the console's script from this origin. */
export const Layout: FC<PropsWithChildren<{ title: string; ctx: PageContext; active?: string }>> = (
  { title, ctx, active, children },
) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{title} · Gateway console</title>
      <link rel="icon" href={`${ctx.base}/assets/favicon.svg`} type="image/svg+xml" />
      <link rel="stylesheet" href={`${ctx.base}/assets/console.css`} />
      <meta
        name="htmx-config"
        content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0}'
      />
      <script src={`${ctx.base}/assets/htmx.min.js`} defer></script>
      <script src={`${ctx.base}/assets/console.js`} defer></script>
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header>
        <span class="brand">Gateway console</span>
        <span class="muted" data-testid="gateway-name">{ctx.gateway}</span>
        {ctx.session && (
          <nav aria-label="Main">
            {NAV.map(([href, label]) => (
              <a
                key={href}
                href={`${ctx.base}${href}`}
                class={active === href ? "active" : ""}
                aria-current={active === href ? "page" : undefined}
              >
                {label}
              </a>
            ))}
          </nav>
        )}
        <span class="spacer" />
        {ctx.session && (
          <form method="post" action={`${ctx.base}/logout`}>
            <Csrf token={ctx.session.csrf} />
            <span class="muted" data-testid="current-role">
              {ctx.session.access.subject} ({ctx.session.access.role})
            </span>{" "}
            <button type="submit" class="secondary">Sign out</button>
          </form>
        )}
      </header>
      <main id="main">{children}</main>
    </body>
  </html>
);

/** A notice above a page's content. */
export const Flash: FC<{ kind: "ok" | "error"; message?: string | null }> = ({ kind, message }) =>
  message
    ? (
      <div class={`flash flash-${kind}`} role={kind === "error" ? "alert" : "status"}>
        {message}
      </div>
    )
    : null;

/** The hidden CSRF field of a form. */
export const Csrf: FC<{ token: string }> = ({ token }) => (
  <input type="hidden" name="_csrf" value={token} />
);

/** A table with a header row and a caption for screen readers; `empty` when there are no rows. */
export const Table: FC<
  { caption: string; head: string[]; rows: Child[][]; empty: string; testId?: string }
> = ({ caption, head, rows, empty, testId }) =>
  rows.length
    ? (
      <table data-testid={testId}>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>{head.map((h) => <th scope="col">{h}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((r) => <tr>{r.map((cell) => <td>{cell}</td>)}</tr>)}
        </tbody>
      </table>
    )
    : <p class="muted" data-testid={testId ? `${testId}-empty` : undefined}>{empty}</p>;

/** A timestamp (UTC), or a dash. */
export const When: FC<{ at: string | null | undefined }> = ({ at }) =>
  at
    ? <time datetime={at}>{at.replace("T", " ").slice(0, 19)} UTC</time>
    : <span class="muted">—</span>;

/** A status word with its colour (`ok`, `warn`, `bad`). */
export const Badge: FC<{ kind: "ok" | "warn" | "bad" | "muted"; text: string }> = (
  { kind, text },
) => <span class={`badge badge-${kind}`}>{text}</span>;

/** An HTTP-like status with its colour. */
export const StatusCode: FC<{ status: number }> = ({ status }) => (
  <Badge kind={status >= 500 ? "bad" : status >= 400 ? "warn" : "ok"} text={String(status)} />
);
