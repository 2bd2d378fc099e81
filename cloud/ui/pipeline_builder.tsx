/** @jsxImportSource hono/jsx */
/**
 * The pipeline builder: pick the gateway, the endpoints and the backends, add middleware and put
 * it in order (the order of application), and see beside it the pipeline's TOML and the diff of
 * the gateway's whole configuration against the version it applied, before publishing. The draft
 * lives in the form until Publish saves it (a new configuration version that the gateway pulls).
 * Every button works without script; with it (htmx), any change refreshes the preview.
 */
import type { Context, Hono } from "hono";
import { createTwoFilesPatch } from "diff";
import type { AppEnv } from "../api/mod.ts";
import type { AnyRecord, PipelineRecord } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { form, notFoundPage, page } from "./guard.tsx";
import { Csrf, Layout } from "./layout.tsx";
import { type FieldErrors, Fields, fieldsOf, parseForm } from "./resource_forms.tsx";
import { GeneralErrors, refChoices, saveRecord } from "./resource_pages.tsx";
import type { UiUser } from "./session.ts";

/** The draft of a pipeline as the form carries it. */
interface Draft {
  name: string;
  description: string;
  gateway_id: string | null;
  endpoint_ids: string[];
  middleware_ids: string[];
  backend_ids: string[];
}

function draftOf(record: PipelineRecord | null): Draft {
  return {
    name: record?.name ?? "",
    description: record?.description ?? "",
    gateway_id: record?.gateway_id ?? null,
    endpoint_ids: record?.endpoint_ids ?? [],
    middleware_ids: record?.middleware_ids ?? [],
    backend_ids: record?.backend_ids ?? [],
  };
}

/** The most ids of each list a pipeline may have (the API's schema: cloud/resources/schemas.ts). */
const LIST_LIMITS: [
  keyof Pick<Draft, "endpoint_ids" | "middleware_ids" | "backend_ids">,
  number,
][] = [
  ["endpoint_ids", 20],
  ["middleware_ids", 30],
  ["backend_ids", 20],
];

/** Applies a list operation (`mw-up:2`, `be-remove:0`, `mw-add`) to the draft. */
function applyOp(draft: Draft, op: string, f: URLSearchParams): Draft {
  const m = /^(mw|be)-(add|up|down|remove)(?::(\d+))?$/.exec(op);
  if (!m) return draft;
  const key = m[1] === "mw" ? "middleware_ids" : "backend_ids";
  const list = [...draft[key]];
  const i = Number(m[3] ?? -1);
  if (m[2] === "add") {
    const id = f.get(m[1] === "mw" ? "add_middleware" : "add_backend") ?? "";
    if (id && (m[1] === "mw" || !list.includes(id))) list.push(id);
  } else if (i >= 0 && i < list.length) {
    if (m[2] === "remove") list.splice(i, 1);
    else {
      const j = m[2] === "up" ? i - 1 : i + 1;
      if (j >= 0 && j < list.length) [list[i], list[j]] = [list[j], list[i]];
    }
  }
  return { ...draft, [key]: list };
}

/** A unified diff of two texts; empty when they are equal. */
export function unifiedDiff(fromName: string, toName: string, a: string, b: string): string {
  if (a === b) return "";
  // Without jsdiff's "=====" banner line; the ---/+++ header names both sides.
  return createTwoFilesPatch(fromName, toName, a, b, "", "", { context: 3 })
    .split("\n").filter((line) => !/^=+$/.test(line)).join("\n").trimEnd();
}

/** A diff drawn line by line (added, removed, hunk header). */
export function DiffView({ diff, testId }: { diff: string; testId?: string }) {
  if (!diff) return <p class="muted" data-testid={testId}>No differences.</p>;
  return (
    <pre class="diff" data-testid={testId}>
      {diff.split("\n").map((line, i) => (
        <span
          key={i}
          class={/^(\+\+\+|---|@@)/.test(line)
            ? "hunk"
            : line.startsWith("+")
            ? "add"
            : line.startsWith("-")
            ? "del"
            : ""}
        >
          {line}
          {"\n"}
        </span>
      ))}
    </pre>
  );
}

async function preview(s: Services, user: UiUser, id: string | null, draft: Draft) {
  const now = new Date().toISOString();
  const record = {
    id: id ?? "00000000-0000-7000-8000-000000000000",
    team_id: user.team.id,
    ...draft,
    name: draft.name || "new_pipeline",
    created_at: now,
    updated_at: now,
    revision: 0,
  } as unknown as PipelineRecord;
  const pipeline = await s.resources.draftPipelineConfig(user.team.id, record);
  if (!draft.gateway_id) return { pipeline, gateway: null };
  const gateway = await s.resources.get("gateways", user.team.id, draft.gateway_id);
  if (!gateway) return { pipeline, gateway: null };
  const next = await s.resources.draftGatewayConfig(user.team.id, gateway.id, "pipelines", record);
  const state = await s.store.gatewayState.get(user.team.id, gateway.id);
  const applied = state.applied_version === null
    ? null
    : await s.store.configHistory.snapshot(user.team.id, gateway.id, state.applied_version);
  const before = applied?.toml ?? "";
  const after = next.toml ?? "";
  return {
    pipeline,
    gateway: {
      code: gateway.code,
      appliedVersion: state.applied_version,
      problems: next.problems,
      diff: unifiedDiff(
        state.applied_version === null
          ? "nothing applied yet"
          : `applied version ${state.applied_version}`,
        "with this draft",
        before,
        after,
      ),
    },
  };
}

async function builderPage(
  c: Context<AppEnv>,
  s: Services,
  user: UiUser,
  id: string | null,
  draft: Draft,
  errors: FieldErrors = new Map(),
) {
  const t = user.team.id;
  const refs = await refChoices(s, t, ["gateways", "endpoints", "middleware", "backends"]);
  const all = {
    endpoints: await s.store.repos.endpoints.all(t) as AnyRecord[],
    middleware: await s.store.repos.middleware.all(t) as AnyRecord[],
    backends: await s.store.repos.backends.all(t) as AnyRecord[],
  };
  const byId = new Map(
    [...all.endpoints, ...all.middleware, ...all.backends].map((r) => [r.id, r]),
  );
  const label = (rid: string) => {
    const r = byId.get(rid) as (AnyRecord & { type?: string }) | undefined;
    return r ? `${r.name} (${r.type})` : `missing ${rid}`;
  };
  const view = await preview(s, user, id, draft);
  const action = id ? `/pipelines/${id}/edit` : "/pipelines/new";
  const fields = fieldsOf("pipelines", id === null);
  const OrderedList = (
    { prefix, name, ids, title, hint }: {
      prefix: "mw" | "be";
      name: string;
      ids: string[];
      title: string;
      hint: string;
    },
  ) => (
    <fieldset class="field" data-testid={`${prefix}-list`}>
      <legend>{title}</legend>
      <p class="help">{hint}</p>
      {ids.length === 0 && <p class="muted">None yet.</p>}
      <ol>
        {ids.map((rid, i) => (
          <li key={`${rid}-${i}`}>
            <input type="hidden" name={name} value={rid} />
            <span>{label(rid)}</span>{" "}
            <button
              type="submit"
              name="op"
              value={`${prefix}-up:${i}`}
              class="secondary small"
              disabled={i === 0}
              aria-label={`Move ${label(rid)} up`}
            >
              ↑
            </button>
            <button
              type="submit"
              name="op"
              value={`${prefix}-down:${i}`}
              class="secondary small"
              disabled={i === ids.length - 1}
              aria-label={`Move ${label(rid)} down`}
            >
              ↓
            </button>
            <button
              type="submit"
              name="op"
              value={`${prefix}-remove:${i}`}
              class="danger small"
              aria-label={`Remove ${label(rid)}`}
            >
              Remove
            </button>
          </li>
        ))}
      </ol>
      <div class="row">
        <label class="inline" for={`add-${prefix}`}>Add</label>
        <select id={`add-${prefix}`} name={prefix === "mw" ? "add_middleware" : "add_backend"}>
          {(prefix === "mw" ? all.middleware : all.backends).map((r) => (
            <option key={r.id} value={r.id}>{label(r.id)}</option>
          ))}
        </select>
        <button type="submit" name="op" value={`${prefix}-add`} class="secondary">
          Add {prefix === "mw" ? "middleware" : "backend"}
        </button>
      </div>
    </fieldset>
  );
  return c.html(
    <Layout title={id ? `Build ${draft.name}` : "New pipeline"} user={user} active="/pipelines">
      <h1>{id ? `Pipeline ${draft.name}` : "New pipeline"}</h1>
      <GeneralErrors errors={errors} />
      <form
        method="post"
        action={action}
        hx-post={action}
        hx-trigger="change"
        hx-target="#preview"
        hx-select="#preview"
        hx-swap="outerHTML"
        data-testid="pipeline-builder"
      >
        <Csrf token={user.session.csrf} />
        <div class="split">
          <div class="card">
            <Fields
              fields={fields}
              values={draft as unknown as Record<string, unknown>}
              errors={errors}
              refs={refs}
            />
            <fieldset class="field" data-testid="endpoint-choice">
              <legend>Endpoints (where traffic arrives)</legend>
              {all.endpoints.length === 0 && (
                <p class="muted">
                  No endpoints yet: <a href="/endpoints/new">create one</a>.
                </p>
              )}
              {all.endpoints.map((e) => (
                <label class="check" key={e.id}>
                  <input
                    type="checkbox"
                    name="endpoint_ids"
                    value={e.id}
                    checked={draft.endpoint_ids.includes(e.id)}
                  />{" "}
                  {label(e.id)}
                </label>
              ))}
              {errors.get("endpoint_ids")?.map((m) => <p class="field-error" key={m}>{m}</p>)}
            </fieldset>
            <OrderedList
              prefix="mw"
              name="middleware_ids"
              ids={draft.middleware_ids}
              title="Middleware (applied in this order)"
              hint="Requests pass through them top to bottom; put authentication and CORS first."
            />
            {errors.get("middleware_ids")?.map((m) => <p class="field-error" key={m}>{m}</p>)}
            <OrderedList
              prefix="be"
              name="backend_ids"
              ids={draft.backend_ids}
              title="Backends (the first is the primary)"
              hint="Where requests go; the primary's answer is returned."
            />
            {errors.get("backend_ids")?.map((m) => <p class="field-error" key={m}>{m}</p>)}
            <div class="row">
              <button type="submit" name="op" value="preview" class="secondary">Preview</button>
              <button type="submit" name="op" value="publish">Publish</button>
              <a href={id ? `/pipelines/${id}` : "/pipelines"}>Cancel</a>
            </div>
          </div>
          <section id="preview" aria-live="polite">
            <div class="card">
              <h2>Pipeline TOML</h2>
              {view.pipeline.skipped.length > 0 && (
                <p class="muted" data-testid="pipeline-incomplete">
                  {view.pipeline.skipped[0].reason}
                </p>
              )}
              {view.pipeline.toml !== null && view.pipeline.skipped.length === 0
                ? <pre data-testid="pipeline-toml">{view.pipeline.toml}</pre>
                : (
                  <ul class="field-error">
                    {view.pipeline.problems.map((p) => (
                      <li key={p.path}>
                        <code>{p.path}</code> {p.message}
                      </li>
                    ))}
                  </ul>
                )}
            </div>
            {view.gateway && (
              <div class="card">
                <h2>Gateway {view.gateway.code}: changes against what it applied</h2>
                {view.gateway.problems.length > 0 && (
                  <ul class="field-error">
                    {view.gateway.problems.map((p) => (
                      <li key={p.path}>
                        <code>{p.path}</code> {p.message}
                      </li>
                    ))}
                  </ul>
                )}
                <DiffView diff={view.gateway.diff} testId="gateway-diff" />
              </div>
            )}
          </section>
        </div>
      </form>
      {id && (
        <p>
          <a href={`/pipelines/${id}/delete`}>Delete this pipeline…</a>
        </p>
      )}
    </Layout>,
    errors.size ? 422 : 200,
  );
}

/** Mounts `/pipelines/new` and `/pipelines/:id/edit`. */
export function mountPipelineBuilder(ui: Hono<AppEnv>, s: Services): void {
  const handle = async (
    c: Context<AppEnv>,
    user: UiUser,
    f: Record<string, string>,
    params: URLSearchParams,
    id: string | null,
  ) => {
    const fields = fieldsOf("pipelines", id === null);
    const parsed = parseForm(fields, params);
    let draft: Draft = {
      name: String(parsed.body.name ?? ""),
      description: String(parsed.body.description ?? ""),
      gateway_id: (parsed.body.gateway_id as string | null | undefined) ?? null,
      endpoint_ids: params.getAll("endpoint_ids"),
      middleware_ids: params.getAll("middleware_ids"),
      backend_ids: params.getAll("backend_ids"),
    };
    draft = applyOp(draft, f.op ?? "", params);
    // A posted form may carry any number of ids: past the API's limits nothing is looked up.
    const tooMany = new Map<string, string[]>();
    for (const [key, max] of LIST_LIMITS) {
      if (draft[key].length > max) {
        draft = { ...draft, [key]: draft[key].slice(0, max) };
        tooMany.set(key, [`at most ${max} entries`]);
      }
    }
    if (tooMany.size) return builderPage(c, s, user, id, draft, tooMany);
    if (f.op !== "publish") return builderPage(c, s, user, id, draft);
    const names = [
      ...fields,
      { name: "endpoint_ids" },
      { name: "middleware_ids" },
      { name: "backend_ids" },
    ];
    const saved = await saveRecord(s, user, "pipelines", id, {
      body: { ...draft },
      raw: {},
      problems: [],
    }, names);
    if (saved.ok) return c.redirect(`/pipelines/${saved.record.id}`, 303);
    return builderPage(c, s, user, id, draft, saved.errors);
  };

  ui.get("/pipelines/new", page(s, (c, user) => builderPage(c, s, user, null, draftOf(null))));
  ui.post("/pipelines/new", form(s, (c, user, f, params) => handle(c, user, f, params, null)));
  ui.get(
    "/pipelines/:id/edit",
    page(s, async (c, user) => {
      const p = await s.store.repos.pipelines.get(user.team.id, c.req.param("id")!);
      if (!p) return notFoundPage(c, user, "pipeline");
      return builderPage(c, s, user, p.id, draftOf(p));
    }),
  );
  ui.post(
    "/pipelines/:id/edit",
    form(s, async (c, user, f, params) => {
      const p = await s.store.repos.pipelines.get(user.team.id, c.req.param("id")!);
      if (!p) return notFoundPage(c, user, "pipeline");
      return handle(c, user, f, params, p.id);
    }),
  );
}
