/** @jsxImportSource hono/jsx */
/** Page frame and small components of the web UI. */
import type { Child, FC, PropsWithChildren } from "hono/jsx";
import type { UiUser } from "./session.ts";

/** The pages of the navigation bar. */
export const NAV: [string, string][] = [
  ["/fleet", "Fleet"],
  ["/gateways", "Gateways"],
  ["/pipelines", "Pipelines"],
  ["/endpoints", "Endpoints"],
  ["/middleware", "Middleware"],
  ["/transforms", "Transforms"],
  ["/backends", "Backends"],
  ["/services", "Services"],
  ["/networks", "Networks"],
  ["/tokens", "Tokens"],
  ["/teams", "Team"],
  ["/audit", "Audit log"],
];

/**
 * The page frame: header with navigation, the current team (always named), the team switcher
 * (with more than one team) and sign-out, when signed in.
 */
export const Layout: FC<
  PropsWithChildren<{ title: string; user?: UiUser | null; active?: string }>
> = (
  { title, user, active, children },
) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{title} · Gateway Cloud</title>
      <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href="/ui.css" />
      <meta
        name="htmx-config"
        content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'
      />
      <script src="/assets/htmx.min.js" defer></script>
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header>
        <span class="brand">Gateway Cloud</span>
        {user && (
          <nav aria-label="Main">
            {NAV.map(([href, label]) => (
              <a
                key={href}
                href={href}
                class={active === href ? "active" : ""}
                aria-current={active === href ? "page" : undefined}
              >
                {label}
              </a>
            ))}
          </nav>
        )}
        <span class="spacer" />
        {user && (
          <span class="current-team">
            Team <strong data-testid="current-team">{user.team.name}</strong>{" "}
            <span class="muted">({user.role})</span>
          </span>
        )}
        {user && user.teams.length > 1 && (
          <form method="post" action="/teams/switch" aria-label="Switch team">
            <input type="hidden" name="_csrf" value={user.session.csrf} />
            <input type="hidden" name="back" value={active ?? "/gateways"} />
            <select name="team_id" aria-label="Team to work in" data-testid="team-select">
              {user.teams.map((t) => (
                <option value={t.team.id} selected={t.team.id === user.team.id}>
                  {t.team.name}
                </option>
              ))}
            </select>
            <button type="submit" class="secondary">Switch</button>
          </form>
        )}
        {user && (
          <form method="post" action="/sign-out">
            <input type="hidden" name="_csrf" value={user.session.csrf} />
            <span class="muted" data-testid="current-user">{user.user.email}</span>{" "}
            <button type="submit" class="secondary">Sign out</button>
          </form>
        )}
      </header>
      <main id="main">{children}</main>
    </body>
  </html>
);

/** A notice above a form. */
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

/** A table with a header row; `empty` when there are no rows. */
export const Table: FC<{ head: string[]; rows: Child[][]; empty: string; testId?: string }> = (
  { head, rows, empty, testId },
) =>
  rows.length
    ? (
      <table data-testid={testId}>
        <thead>
          <tr>{head.map((h) => <th key="th-86-32">{h}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((r) => <tr key="tr-88-33">{r.map((cell) => <td key="td-88-54">{cell}</td>)}
          </tr>)}
        </tbody>
      </table>
    )
    : <p class="muted">{empty}</p>;

/** A timestamp, or a dash. */
export const When: FC<{ at: string | null | undefined }> = ({ at }) =>
  at
    ? <time datetime={at}>{at.replace("T", " ").slice(0, 19)} UTC</time>
    : <span class="muted">—</span>;

/** A gateway status word with its colour. */
export const Status: FC<{ status: string }> = ({ status }) => (
  <span class={`status status-${status}`} data-testid="gateway-status">{status}</span>
);
