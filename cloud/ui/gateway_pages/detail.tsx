/** @jsxImportSource hono/jsx */
/** GET `/gateways/:id`: one gateway: its status and reports, configuration and machine tokens (a shared one: its record only). */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Visible } from "../../resources/mod.ts";
import type { AnyRecord } from "../../store/mod.ts";
import type { Services } from "../../services.ts";
import { notFoundPage, page } from "../guard.tsx";
import { Csrf, Flash, Layout, Status, Table, When } from "../layout.tsx";
import { sharedRecordPage } from "../shared_pages.tsx";
import { GatewayAlerts } from "./alerts.tsx";

/** Machine tokens listed on a gateway's page (newest first; the API lists all). */
const TOKENS_SHOWN = 50;

/** Mounts GET `/gateways/:id`: one gateway: its status and reports, configuration and machine tokens (a shared one: its record only). */
export function mountGatewayDetail(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/gateways/:id",
    page(s, async (c, user) => {
      const seen = await s.resources.visible("gateways", user.team.id, c.req.param("id")!);
      if (!seen) return notFoundPage(c, user, "gateway");
      // Another team's gateway: its record and status, never its configuration or tokens.
      if (seen.access !== "owner") {
        return sharedRecordPage(c, s, user, "gateways", seen as Visible<AnyRecord>);
      }
      const gw = seen.record;
      const view = await s.resources.gatewayView(gw, true);
      const config = await s.resources.gatewayConfig(user.team.id, gw.id);
      const allTokens = await s.store.tokens.listMachineTokens(user.team.id, gw.id);
      const tokens = allTokens.slice(0, TOKENS_SHOWN);
      const now = s.options.clock.now();
      const st = view.last_status;
      return c.html(
        <Layout title={gw.code} user={user} active="/gateways">
          <h1>
            Gateway {gw.code} <Status status={view.status} />
          </h1>
          <p class="row">
            <a href={`/gateways/${gw.id}/edit`}>Edit, share or delete</a>
            <a href={`/gateways/${gw.id}/versions`}>Configuration versions</a>
          </p>
          {config.pinnedTo !== undefined && (
            <Flash
              kind="error"
              message={`Rolled back: this gateway gets the configuration of version ${config.pinnedTo} until you resume on the versions page.`}
            />
          )}
          <div class="card">
            <p>
              <strong>Name:</strong> {gw.name} · <strong>Id:</strong> <code>{gw.id}</code>
            </p>
            <p>
              <strong>Last seen:</strong> <When at={view.last_seen_at} /> ·{" "}
              <strong>Desired version:</strong>{" "}
              <span data-testid="desired-version">{config.version}</span> ·{" "}
              <strong>Applied version:</strong> {view.applied_version ?? "—"}
            </p>
            {view.last_apply && (
              <p>
                <strong>Last apply:</strong> version {view.last_apply.version}{" "}
                {view.last_apply.status} at <When at={view.last_apply.reported_at} />
                {view.last_apply.errors.length > 0 && (
                  <ul>
                    {view.last_apply.errors.map((e) => (
                      <li>{e.path ? <code>{e.path}</code> : null} {e.message}</li>
                    ))}
                  </ul>
                )}
              </p>
            )}
          </div>
          <h2>Last status report</h2>
          {st
            ? (
              <div class="card" data-testid="status-report">
                <p>
                  <strong>Health:</strong> {st.health} · <strong>Software:</strong>{" "}
                  <span data-testid="software-version">{st.software_version}</span> ·{" "}
                  <strong>Uptime:</strong> {Math.round(st.uptime_secs / 60)} min ·{" "}
                  <strong>Reported:</strong> <When at={st.reported_at} />
                </p>
                {st.console_url && /^https?:\/\//.test(st.console_url) && (
                  <p>
                    <a
                      href={st.console_url}
                      rel="noopener noreferrer"
                      referrerpolicy="no-referrer"
                      data-testid="console-link"
                    >
                      Open the gateway's operations console
                    </a>{" "}
                    <span class="muted">
                      (at the gateway, on its network: messages and content stay there)
                    </span>
                  </p>
                )}
                <Table
                  head={["Pipeline", "Requests", "Errors"]}
                  empty="No pipeline counters."
                  rows={st.pipelines.map((p) => [p.name, p.requests, p.errors])}
                />
                {Object.keys(st.error_counts).length > 0 && (
                  <p>
                    <strong>Errors:</strong>{" "}
                    {Object.entries(st.error_counts).map(([k, v]) => `${k}: ${v}`).join(", ")}
                  </p>
                )}
                {st.checks.length > 0 && (
                  <ul>
                    {st.checks.map((ch) => (
                      <li>{ch.name}: {ch.status}{ch.message ? ` (${ch.message})` : ""}</li>
                    ))}
                  </ul>
                )}
              </div>
            )
            : <p class="muted">The gateway has not reported its status yet.</p>}
          {st && <GatewayAlerts alerts={st.alerts ?? []} />}
          <h2>Desired configuration (version {config.version})</h2>
          {config.skipped.length > 0 && (
            <ul>
              {config.skipped.map((x) => (
                <li key="li-124-42">Pipeline {x.pipeline} is left out: {x.reason}</li>
              ))}
            </ul>
          )}
          {config.toml !== null
            ? <pre data-testid="desired-toml">{config.toml}</pre>
            : (
              <ul class="flash flash-error">
                {config.problems.map((p) => <li key="li-131-45">{p.path}: {p.message}</li>)}
              </ul>
            )}
          <h2>Reported configuration</h2>
          {view.reported_config
            ? (
              <p>
                {view.reported_config.size} bytes uploaded{" "}
                <When at={view.reported_config.uploaded_at} />
                {view.reported_config.problems.length > 0 &&
                  ` · ${view.reported_config.problems.length} problems`} ·{" "}
                <a href={`/gateways/${gw.id}/reported-config`}>download</a>
              </p>
            )
            : <p class="muted">Never uploaded.</p>}
          <h2>Machine tokens</h2>
          {allTokens.length > tokens.length && (
            <p class="muted">
              The newest {tokens.length} of {allTokens.length};{" "}
              <code>GET /api/gateways/{gw.id}/tokens</code> lists all.
            </p>
          )}
          <Table
            head={["Issued", "By", "Expires", "Last used", "State", ""]}
            empty="No machine tokens."
            rows={tokens.map((t) => {
              const state = t.revoked_at
                ? "revoked"
                : Date.parse(t.expires_at) <= now
                ? "expired"
                : "active";
              return [
                <When key="when-157-17" at={t.issued_at} />,
                t.issued_by,
                <When key="when-159-17" at={t.expires_at} />,
                <When key="when-160-17" at={t.last_used_at} />,
                state,
                state === "active"
                  ? (
                    <form method="post" action={`/gateways/${gw.id}/tokens/${t.jti}/revoke`}>
                      <Csrf token={user.session.csrf} />
                      <button type="submit" class="danger">Revoke</button>
                    </form>
                  )
                  : "",
              ];
            })}
          />
        </Layout>,
      );
    }),
  );
}
