/** @jsxImportSource hono/jsx */
/** GET `/gateways/:id/versions`: a gateway's configuration versions, the diff between two, and its pin. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Services } from "../../services.ts";
import { notFoundPage, page } from "../guard.tsx";
import { Csrf, Layout, Table, When } from "../layout.tsx";
import { DiffView, unifiedDiff } from "../pipeline_builder.tsx";

/** Mounts GET `/gateways/:id/versions`: a gateway's configuration versions, the diff between two, and its pin. */
export function mountVersionHistory(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/gateways/:id/versions",
    page(s, async (c, user) => {
      const t = user.team.id;
      const gw = await s.store.repos.gateways.get(t, c.req.param("id")!);
      if (!gw) return notFoundPage(c, user, "gateway");
      // Reading the desired configuration records a new version when the records changed.
      const desired = await s.resources.gatewayConfig(t, gw.id);
      const [versions, state, pin] = await Promise.all([
        s.store.configHistory.list(t, gw.id),
        s.store.gatewayState.get(t, gw.id),
        s.store.configHistory.pin(t, gw.id),
      ]);
      const from = Number(c.req.query("from"));
      const to = Number(c.req.query("to"));
      let diff: { from: number; to: number; text: string | null } | null = null;
      if (Number.isInteger(from) && Number.isInteger(to) && from > 0 && to > 0) {
        const [a, b] = await Promise.all([
          s.store.configHistory.snapshot(t, gw.id, from),
          s.store.configHistory.snapshot(t, gw.id, to),
        ]);
        diff = {
          from,
          to,
          text: a && b
            ? unifiedDiff(`version ${from}`, `version ${to}`, a.toml ?? "", b.toml ?? "")
            : null,
        };
      }
      // By default: what the gateway applied against what it should run (else the one before).
      const previous = versions.find((v) => v.version < desired.version)?.version;
      const defaultFrom =
        state.applied_version !== null && state.applied_version !== desired.version
          ? state.applied_version
          : previous ?? desired.version;
      return c.html(
        <Layout title={`${gw.code} versions`} user={user} active="/gateways">
          <h1>
            Configuration versions of <a href={`/gateways/${gw.id}`}>{gw.code}</a>
          </h1>
          {pin
            ? (
              <div class="flash flash-error" role="status" data-testid="pinned">
                Rolled back: the gateway gets the configuration of version {pin.version} (pinned by
                {" "}
                {pin.pinned_by}{" "}
                <When at={pin.pinned_at} />). Changes to pipelines are not published to it until you
                resume.
                <form method="post" action={`/gateways/${gw.id}/versions/resume`}>
                  <Csrf token={user.session.csrf} />
                  <button type="submit">Resume following the pipelines</button>
                </form>
              </div>
            )
            : (
              <p class="muted">
                The gateway follows its pipelines: every change makes a new version, which it pulls.
                Roll back to pin it to an earlier version.
              </p>
            )}
          <p>
            <strong>Desired:</strong> version {desired.version} · <strong>Applied:</strong>{" "}
            {state.applied_version ?? "nothing yet"}
            {state.last_apply && (
              <>
                {" "}({state.last_apply.status} <When at={state.last_apply.reported_at} />)
              </>
            )}
          </p>
          <form method="get" action={`/gateways/${gw.id}/versions`} class="row card">
            <div>
              <label for="diff-from">Compare version</label>
              <select id="diff-from" name="from">
                {versions.map((v) => (
                  <option
                    key={v.version}
                    value={v.version}
                    selected={v.version === (diff?.from ?? defaultFrom)}
                  >
                    {v.version}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="diff-to">with version</label>
              <select id="diff-to" name="to">
                {versions.map((v) => (
                  <option
                    key={v.version}
                    value={v.version}
                    selected={v.version === (diff?.to ?? desired.version)}
                  >
                    {v.version}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" class="secondary">Show diff</button>
          </form>
          {diff && (
            <>
              <h2>Version {diff.from} → version {diff.to}</h2>
              {diff.text === null
                ? <p class="muted">One of these versions has no stored snapshot.</p>
                : <DiffView diff={diff.text} testId="version-diff" />}
            </>
          )}
          <h2>History</h2>
          <Table
            head={["Version", "Generated", "From", "Pipelines", "Gateway", ""]}
            empty="No versions yet: the gateway has not pulled and nobody looked."
            testId="versions"
            rows={versions.map((v) => [
              <span key="v">
                {v.version}
                {v.version === desired.version ? " (desired)" : ""}
              </span>,
              <When key="gen" at={v.generated_at} />,
              v.source,
              v.pipelines.join(", ") || "—",
              v.applied_at
                ? (
                  <span key="applied">
                    applied <When at={v.applied_at} />
                  </span>
                )
                : v.failed_at
                ? (
                  <span key="failed">
                    failed <When at={v.failed_at} />
                  </span>
                )
                : "—",
              v.snapshot_bytes > 0 && v.version !== desired.version
                ? (
                  <form
                    key="rb"
                    method="post"
                    action={`/gateways/${gw.id}/versions/${v.version}/rollback`}
                  >
                    <Csrf token={user.session.csrf} />
                    <button type="submit" class="secondary">Roll back to {v.version}</button>
                  </form>
                )
                : "",
            ])}
          />
        </Layout>,
      );
    }),
  );
}
