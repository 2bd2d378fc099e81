/** @jsxImportSource hono/jsx */
/** API tokens: create (shown once), list with last use, revoke; approved MCP clients, revoke. */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { createApiToken } from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { StoreError } from "../store/mod.ts";
import { form, page } from "./guard.tsx";
import { Csrf, Flash, Layout, Table, When } from "./layout.tsx";
import type { UiUser } from "./session.ts";
import { type TokenState, tokenState } from "../resources/mod.ts";
import {
  anyOf,
  emptyText,
  type FilterSpec,
  ListControls,
  listState,
  orFirstPage,
  Pager,
} from "./list_controls.tsx";

/** The state filter of the token list. */
const STATE_FILTER: FilterSpec = {
  name: "state",
  label: "State",
  options: anyOf(["active", "expired", "revoked"].map((v) => ({ value: v, label: v }))),
};

async function tokensPage(
  c: Context<AppEnv>,
  s: Services,
  user: UiUser,
  extra: { created?: { name: string; token: string }; error?: string } = {},
) {
  const state = listState(c, "/tokens", [STATE_FILTER]);
  const [found, grants] = await Promise.all([
    s.teams.apiTokenPage(user, {
      limit: state.limit,
      cursor: state.cursor,
      name: state.name || undefined,
      state: (state.filters.state || undefined) as TokenState | undefined,
    }, s.options.clock.now()),
    s.teams.mcpGrants(user),
  ]);
  const tokens = found.items;
  const now = s.options.clock.now();
  const emails = new Map(
    (await s.store.identity.members(user.team.id)).map((m) => [m.user.id, m.user.email]),
  );
  return c.html(
    <Layout title="API tokens" user={user} active="/tokens">
      <h1>API tokens of {user.team.name}</h1>
      <p class="muted">
        API tokens act in this team for the API, the gateway authorize endpoint and MCP clients
        (header <code>Authorization: Bearer …</code>).
      </p>
      {extra.created && (
        <div class="card">
          <Flash
            kind="ok"
            message={`Token ${extra.created.name} created. Copy it now: it is not shown again.`}
          />
          <div class="secret" data-testid="new-token">{extra.created.token}</div>
        </div>
      )}
      <Flash kind="error" message={extra.error} />
      <form method="post" action="/tokens" class="card row">
        <Csrf token={user.session.csrf} />
        <div>
          <label for="token-name">Name</label>
          <input
            id="token-name"
            name="name"
            required
            maxlength={100}
            placeholder="e.g. ci-deploy"
          />
        </div>
        <div>
          <label for="token-expiry">Expires</label>
          <select id="token-expiry" name="expires_in_days">
            <option value="30">in 30 days</option>
            <option value="90" selected>in 90 days</option>
            <option value="365">in a year</option>
            <option value="">never</option>
          </select>
        </div>
        <button type="submit">Create token</button>
      </form>
      <ListControls state={state} what="API tokens" />
      <Table
        head={["Name", "Token", "Owner", "Created", "Last used", "Expires", "State", ""]}
        empty={emptyText(state, "API tokens")}
        testId="tokens"
        rows={tokens.map((t) => [
          t.name,
          <code key="code-70-11">{t.prefix}…</code>,
          emails.get(t.user_id) ?? "former member",
          <When key="when-72-11" at={t.created_at} />,
          <When key="when-73-11" at={t.last_used_at} />,
          t.expires_at ? <When key="when-74-26" at={t.expires_at} /> : "never",
          tokenState(t, now),
          t.revoked_at ? "" : (
            <form method="post" action={`/tokens/${t.id}/revoke`}>
              <Csrf token={user.session.csrf} />
              <button type="submit" class="danger">Revoke</button>
            </form>
          ),
        ])}
      />
      <Pager state={state} next={found.next_cursor} shown={tokens.length} />
      <h2>Connected MCP clients</h2>
      <p class="muted">
        Applications you allowed through the MCP authorization flow. Each acts as the approving user
        in this team until revoked or 30 days after its last use.
      </p>
      <Table
        head={["Application", "Client id", "Approved by", "Approved", "Last refresh", "Ends", ""]}
        empty="No MCP client has been approved in this team."
        testId="mcp-clients"
        rows={grants.map((g) => [
          g.client_name ?? "(unnamed)",
          <code key="client">{g.client_id}</code>,
          emails.get(g.user_id) ?? "former member",
          <When key="created" at={g.created_at} />,
          <When key="refreshed" at={g.refreshed_at} />,
          <When key="ends" at={g.expires_at} />,
          <form key="revoke" method="post" action={`/tokens/mcp/${g.id}/revoke`}>
            <Csrf token={user.session.csrf} />
            <button type="submit" class="danger">Revoke</button>
          </form>,
        ])}
      />
    </Layout>,
    extra.error ? 400 : 200,
  );
}

/** Mounts `/tokens` and its forms. */
export function mountTokenPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/tokens",
    page(
      s,
      (c, user) =>
        orFirstPage(c, listState(c, "/tokens", [STATE_FILTER]), () => tokensPage(c, s, user)),
    ),
  );

  ui.post(
    "/tokens",
    form(s, async (c, user, f) => {
      const name = (f.name ?? "").trim();
      if (!name || name.length > 100) {
        return tokensPage(c, s, user, { error: "Name the token (1-100 characters)." });
      }
      const days = f.expires_in_days ? Number(f.expires_in_days) : null;
      if (days !== null && (!Number.isInteger(days) || days < 1 || days > 3650)) {
        return tokensPage(c, s, user, { error: "Pick an expiry from the list." });
      }
      const { token } = await createApiToken(s, {
        userId: user.user.id,
        teamId: user.team.id,
        name,
        expiresInDays: days,
      }, user.actor);
      return tokensPage(c, s, user, { created: { name, token } });
    }),
  );

  ui.post(
    "/tokens/mcp/:id/revoke",
    form(s, async (c, user) => {
      try {
        await s.teams.revokeMcpGrant(user, c.req.param("id")!);
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return tokensPage(c, s, user, { error: "No such MCP client approval in this team." });
      }
      return c.redirect("/tokens", 303);
    }),
  );

  ui.post(
    "/tokens/:id/revoke",
    form(s, async (c, user) => {
      try {
        await s.teams.revokeApiToken(user, c.req.param("id")!);
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return tokensPage(c, s, user, { error: "No such token in this team." });
      }
      return c.redirect("/tokens", 303);
    }),
  );
}
