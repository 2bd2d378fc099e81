/** @jsxImportSource hono/jsx */
/** GET `/pipelines/:id`: one pipeline: its parts, its TOML and the gateways that run it. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { Visible } from "../../resources/mod.ts";
import type { AnyRecord, RecordOf, ResourceKind } from "../../store/mod.ts";
import { ShareSection, sharesOf } from "../resource_pages.tsx";
import type { Services } from "../../services.ts";
import { notFoundPage, page } from "../guard.tsx";
import { Layout, Table } from "../layout.tsx";
import { sharedRecordPage } from "../shared_pages.tsx";

/** Mounts GET `/pipelines/:id`: one pipeline: its parts, its TOML and the gateways that run it. */
export function mountPipelineDetail(ui: Hono<AppEnv>, s: Services): void {
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
