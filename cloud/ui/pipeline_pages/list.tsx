/** @jsxImportSource hono/jsx */
/** GET `/pipelines`: the team's pipelines and those shared with it, filtered and paged. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { AnyRecord, GatewayRecord, PipelineRecord, ResourceKind } from "../../store/mod.ts";
import { kindFilters, visiblePage } from "../resource_pages.tsx";
import type { Services } from "../../services.ts";
import { page } from "../guard.tsx";
import { Layout, Table } from "../layout.tsx";
import { emptyText, ListControls, listState, orFirstPage, Pager } from "../list_controls.tsx";
import { OwnerCell } from "../shared_pages.tsx";

/** Mounts GET `/pipelines`: the team's pipelines and those shared with it, filtered and paged. */
export function mountPipelineList(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/pipelines",
    page(s, async (c, user) => {
      const t = user.team.id;
      const state = listState(c, "/pipelines", await kindFilters(s, t, "pipelines"));
      return await orFirstPage(c, state, async () => {
        const found = await visiblePage(s, user, "pipelines", state);
        // References are named only when this team sees them (its own, or shared with it).
        const label = async (kind: ResourceKind, id: string) => {
          const seen = await s.resources.visible(kind, t, id);
          const r = seen?.record as AnyRecord | undefined;
          return r ? (kind === "gateways" ? (r as GatewayRecord).code : r.name) : null;
        };
        const labels = async (kind: ResourceKind, ids: string[], sep: string) => {
          const all = await Promise.all(ids.map((id) => label(kind, id)));
          const named = all.filter((x) => x !== null);
          const hidden = all.length - named.length;
          return [named.join(sep), hidden ? `${hidden} not shared` : ""].filter(Boolean)
            .join("; ") || "—";
        };
        const rows = await Promise.all(found.items.map(async ({ record, access, team }) => {
          const p = record as PipelineRecord;
          const gateway = p.gateway_id ? await label("gateways", p.gateway_id) : null;
          return [
            <a key="a" href={`/pipelines/${p.id}`}>{p.name}</a>,
            p.gateway_id && gateway
              ? (access === "owner"
                ? <a key="gw" href={`/gateways/${p.gateway_id}`}>{gateway}</a>
                : gateway)
              : <span key="gw" class="muted">{p.gateway_id ? "not shared" : "none"}</span>,
            await labels("endpoints", p.endpoint_ids, ", "),
            await labels("middleware", p.middleware_ids, " → "),
            await labels("backends", p.backend_ids, ", "),
            <OwnerCell key="team" access={access} team={team.name} />,
          ];
        }));
        return c.html(
          <Layout title="Pipelines" user={user} active="/pipelines">
            <h1>Pipelines of {user.team.name}</h1>
            <p class="muted">
              A pipeline takes traffic from its endpoints through its middleware, in order, to its
              backends, on the gateway it is placed on. Build one here, through the API (<code>
                /api/pipelines
              </code>) or with an MCP client. Pipelines other teams share with {user.team.name}{" "}
              are listed after its own, with their team.
            </p>
            <p>
              <a class="button" href="/pipelines/new">New pipeline</a>
            </p>
            <ListControls state={state} what="pipelines" />
            <Table
              head={[
                "Pipeline",
                "Gateway",
                "Endpoints",
                "Middleware (in order)",
                "Backends",
                "Team",
              ]}
              empty={emptyText(state, "pipelines")}
              testId="pipelines"
              rows={rows}
            />
            <Pager state={state} next={found.next_cursor} shown={found.items.length} />
          </Layout>,
        );
      });
    }),
  );
}
