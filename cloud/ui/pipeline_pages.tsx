/** @jsxImportSource hono/jsx */
/** Pipelines (the team's own and those shared with it) and the resources they use. */
import type { Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import type { Visible } from "../resources/mod.ts";
import type {
  AnyRecord,
  GatewayRecord,
  PipelineRecord,
  RecordOf,
  ResourceKind,
} from "../store/mod.ts";
import { kindFilters, ShareSection, sharesOf, visiblePage } from "./resource_pages.tsx";
import type { Services } from "../services.ts";
import { notFoundPage, page } from "./guard.tsx";
import { Layout, Table } from "./layout.tsx";
import { emptyText, ListControls, listState, orFirstPage, Pager } from "./list_controls.tsx";
import { OwnerCell, sharedRecordPage } from "./shared_pages.tsx";

/** Mounts `/pipelines` and `/pipelines/:id`. */
export function mountPipelinePages(ui: Hono<AppEnv>, s: Services): void {
  /** The records of `ids` that still exist, in order. */
  const names = async <K extends ResourceKind>(
    teamId: string,
    kind: K,
    ids: string[],
  ): Promise<RecordOf[K][]> => {
    const out: RecordOf[K][] = [];
    for (const id of ids) {
      const r = await s.resources.get(kind, teamId, id);
      if (r) out.push(r);
    }
    return out;
  };

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

  ui.get(
    "/pipelines/:id",
    page(s, async (c, user) => {
      const t = user.team.id;
      const seen = await s.resources.visible("pipelines", t, c.req.param("id")!);
      if (!seen) return notFoundPage(c, user, "pipeline");
      if (seen.access !== "owner") {
        return sharedRecordPage(c, s, user, "pipelines", seen as Visible<AnyRecord>);
      }
      const p = seen.record;
      const endpoints = await names(t, "endpoints", p.endpoint_ids);
      const middleware = await names(t, "middleware", p.middleware_ids);
      const backends = await names(t, "backends", p.backend_ids);
      const transforms = new Map(
        (await names(
          t,
          "transforms",
          middleware.flatMap((m) => m.transform_id ? [m.transform_id] : []),
        )).map((x) => [x.id, x.name]),
      );
      const gateway = p.gateway_id ? await s.resources.get("gateways", t, p.gateway_id) : null;
      const config = await s.resources.pipelineConfig(t, p);
      const shares = await sharesOf(s, t, p.id);
      return c.html(
        <Layout title={p.name} user={user} active="/pipelines">
          <h1>Pipeline {p.name}</h1>
          <p class="row">
            <a class="button" href={`/pipelines/${p.id}/edit`}>Edit in the builder</a>
            <a href={`/pipelines/${p.id}/delete`}>Delete…</a>
          </p>
          <p>
            {p.description || <span class="muted">No description.</span>} · Gateway:{" "}
            {gateway ? <a href={`/gateways/${gateway.id}`}>{gateway.code}</a> : "none"}
          </p>
          <h2>Endpoints</h2>
          <Table
            head={["Name", "Type", "Options"]}
            empty="No endpoints."
            rows={endpoints.map((
              e,
            ) => [e.name, e.type, <code key="code-78-57">{JSON.stringify(e.options)}</code>])}
          />
          <h2>Middleware (applied in this order)</h2>
          <Table
            head={["#", "Name", "Type", "Transform", "Options"]}
            empty="No middleware."
            rows={middleware.map((
              m,
              i,
            ) => [
              i + 1,
              m.name,
              m.type,
              m.transform_id ? transforms.get(m.transform_id) ?? m.transform_id : "—",
              <code key="code-92-15">{JSON.stringify(m.options)}</code>,
            ])}
          />
          <h2>Backends (the first is the primary)</h2>
          <Table
            head={["Name", "Type", "Targets / options"]}
            empty="No backends."
            rows={backends.map((b) => [
              b.name,
              b.type,
              <code key="code-102-15">
                {b.targets.length
                  ? b.targets.map((x) => `${x.name}=${x.url}`).join(", ")
                  : JSON.stringify(b.options)}
              </code>,
            ])}
          />
          <h2>TOML of this pipeline</h2>
          {config.skipped.length > 0 && <p class="muted">{config.skipped[0].reason}</p>}
          {config.toml !== null && config.skipped.length === 0
            ? <pre>{config.toml}</pre>
            : <ul>{config.problems.map((x) => <li key="li-113-47">{x.path}: {x.message}</li>)}</ul>}
          <h2>Sharing</h2>
          <ShareSection
            kind="pipelines"
            record={p as unknown as AnyRecord}
            user={user}
            shares={shares}
          />
        </Layout>,
      );
    }),
  );
}
