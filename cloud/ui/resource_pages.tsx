/** @jsxImportSource hono/jsx */
/**
 * Create, edit, delete and share the records of every kind in the browser. Forms post back to
 * the page; the body goes through the API's schema and the resource service, so a problem is
 * reported field by field next to the field, in the API's words. Pipelines have their own builder
 * (pipeline_builder.tsx) and transforms their editor (transform_editor.tsx), which reuse these
 * pieces.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { toApiError, validate } from "../api/mod.ts";
import {
  type Access,
  findVisible,
  KINDS,
  SCHEMAS,
  type SharedScope,
  type Visible,
} from "../resources/mod.ts";
import type { AnyRecord, ResourceKind } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { form, notFoundPage, page } from "./guard.tsx";
import { Csrf, Flash, Layout, Table, When } from "./layout.tsx";
import {
  type FieldErrors,
  Fields,
  fieldsOf,
  groupProblems,
  type ParsedForm,
  parseForm,
  type RefChoices,
} from "./resource_forms.tsx";
import type { UiUser } from "./session.ts";
import {
  anyOf,
  emptyText,
  type FilterSpec,
  ListControls,
  type ListState,
  listState,
  orFirstPage,
  Pager,
  SHARED_FILTER,
} from "./list_controls.tsx";
import {
  OwnerCell,
  readOnlyRefused,
  SharedNotice,
  sharedRecordPage,
  teamName,
} from "./shared_pages.tsx";

/** Kinds with a generic list page (gateways and pipelines have their own). */
export const LISTED_KINDS = [
  "endpoints",
  "middleware",
  "transforms",
  "backends",
  "services",
  "networks",
] as const satisfies readonly ResourceKind[];

/** Kinds edited with the generic form (pipelines use the builder, transforms add a preview). */
const FORM_KINDS = [
  "gateways",
  "services",
  "endpoints",
  "backends",
  "middleware",
  "networks",
] as const satisfies readonly ResourceKind[];

/** Title-case plural of a kind, for headings. */
export function kindTitle(kind: ResourceKind): string {
  return kind[0].toUpperCase() + kind.slice(1);
}

/** The `ref`/`refs` choices of a kind's form: the team's records of each kind referred to. */
export async function refChoices(
  s: Services,
  teamId: string,
  kinds: ResourceKind[],
): Promise<RefChoices> {
  const out: RefChoices = {};
  for (const kind of new Set(kinds)) {
    const all = await s.store.repos[kind].all(teamId) as AnyRecord[];
    out[kind] = all.map((r) => ({
      id: r.id,
      name: kind === "gateways" ? `${(r as { code: string }).code}` : r.name,
    }));
  }
  return out;
}

/**
 * Adds the references of another team's record to the form's choices, so that editing it through
 * a write share keeps them: named when the team sees them too, else only as "unchanged".
 */
async function keepSharedRefs(
  s: Services,
  teamId: string,
  fields: { name: string; to?: ResourceKind }[],
  record: AnyRecord,
  refs: RefChoices,
): Promise<void> {
  const values = record as unknown as Record<string, unknown>;
  for (const f of fields) {
    if (!f.to) continue;
    const value = values[f.name];
    const ids = Array.isArray(value) ? value as string[] : value ? [String(value)] : [];
    const choices = refs[f.to] ??= [];
    for (const id of ids) {
      if (choices.some((c) => c.id === id)) continue;
      const seen = await s.resources.visible(f.to, teamId, id);
      const r = seen?.record as AnyRecord | undefined;
      const name = r && (f.to === "gateways" ? (r as { code: string }).code : r.name);
      choices.push({ id, name: name ?? "unchanged (not shared with your team)" });
    }
  }
}

/** What saving a form came to. */
export type SaveResult =
  | { ok: true; record: AnyRecord }
  | { ok: false; errors: FieldErrors; message: string };

/** Creates (`id` null) or updates a record from a parsed form, through the API's checks. */
export async function saveRecord(
  s: Services,
  user: UiUser,
  kind: ResourceKind,
  id: string | null,
  parsed: ParsedForm,
  fieldNames: { name: string }[],
): Promise<SaveResult> {
  const fields = fieldNames as Parameters<typeof groupProblems>[0];
  if (parsed.problems.length) {
    return {
      ok: false,
      errors: groupProblems(fields, parsed.problems),
      message: "Some fields need fixing.",
    };
  }
  try {
    if (id === null) {
      const body = validate(SCHEMAS[kind].create, parsed.body) as Record<string, unknown>;
      return {
        ok: true,
        record: await s.resources.createFrom(kind, user.team.id, user.actor, body) as AnyRecord,
      };
    }
    const patch = validate(SCHEMAS[kind].update, parsed.body) as Record<string, unknown>;
    const updated = await s.resources.update(kind, user.team.id, user.actor, id, patch as never);
    return { ok: true, record: updated.record as AnyRecord };
  } catch (err) {
    const api = toApiError(err);
    if (!api || api.status >= 500) throw err;
    const problems = [...(api.fields ?? [])];
    const configProblems = (api.details?.problems ?? []) as { path: string; message: string }[];
    for (const p of configProblems) {
      problems.push({ field: "", message: `${p.path}: ${p.message}` });
    }
    if (!problems.length) problems.push({ field: "", message: api.message });
    return { ok: false, errors: groupProblems(fields, problems), message: api.message };
  }
}

/** The problems of the record as a whole (not tied to a field). */
export function GeneralErrors({ errors }: { errors: FieldErrors }) {
  const general = errors.get("");
  return general?.length
    ? (
      <div role="alert">
        <ul class="flash flash-error" data-testid="form-errors">
          {general.map((e) => <li key={e}>{e}</li>)}
        </ul>
      </div>
    )
    : null;
}

/** The shares of the team's record `id`, each with the receiving team's name. */
export async function sharesOf(s: Services, teamId: string, id: string) {
  const shares = (await s.shares.outgoing(teamId)).filter((x) => x.resource_id === id);
  return await Promise.all(
    shares.map(async (x) => ({ ...x, target_team_name: await teamName(s, x.target_team_id) })),
  );
}

function editUrl(kind: ResourceKind, id: string): string {
  return kind === "gateways" ? `/gateways/${id}` : `/${kind}/${id}/edit`;
}

async function formPage(
  c: Context<AppEnv>,
  s: Services,
  user: UiUser,
  kind: ResourceKind,
  record: AnyRecord | null,
  state: { values?: Record<string, unknown>; raw?: Record<string, string>; errors?: FieldErrors } =
    {},
  access: Access = "owner",
) {
  const fields = fieldsOf(kind, record === null);
  const refs = await refChoices(s, user.team.id, fields.flatMap((f) => f.to ? [f.to] : []));
  if (record && access !== "owner") await keepSharedRefs(s, user.team.id, fields, record, refs);
  const errors = state.errors ?? new Map();
  const one = KINDS[kind].one;
  const action = record ? `/${kind}/${record.id}/edit` : `/${kind}/new`;
  const shares = record && access === "owner" ? await sharesOf(s, user.team.id, record.id) : [];
  return c.html(
    <Layout title={record ? `${one} ${record.name}` : `New ${one}`} user={user} active={`/${kind}`}>
      <h1>{record ? `Edit ${one} ${record.name}` : `New ${one}`}</h1>
      <p class="muted">{KINDS[kind].what}.</p>
      {record && access !== "owner" && (
        <SharedNotice
          access={access}
          owner={await teamName(s, record.team_id)}
          team={user.team.name}
        />
      )}
      <GeneralErrors errors={errors} />
      <form method="post" action={action} class="card" data-testid="resource-form">
        <Csrf token={user.session.csrf} />
        <Fields
          fields={fields}
          values={state.values ?? (record as unknown as Record<string, unknown>) ?? {}}
          raw={state.raw}
          errors={errors}
          refs={refs}
        />
        <div class="row">
          <button type="submit">{record ? "Save" : `Create ${one}`}</button>
          <a href={record && kind === "gateways" ? `/gateways/${record.id}` : `/${kind}`}>Cancel</a>
        </div>
      </form>
      {record && access === "owner" && (
        <>
          <h2>Sharing</h2>
          <ShareSection kind={kind} record={record} user={user} shares={shares} />
          <h2>Delete</h2>
          <p>
            <a href={`/${kind}/${record.id}/delete`} class="danger-link">Delete this {one}…</a>
          </p>
        </>
      )}
    </Layout>,
    errors.size ? 422 : 200,
  );
}

/** The shares of a record the team owns, and the form to share it with another team. */
export function ShareSection(
  { kind, record, user, shares }: {
    kind: ResourceKind;
    record: AnyRecord;
    user: UiUser;
    shares: {
      id: string;
      target_team_id: string;
      target_team_name: string;
      access: string;
      created_at: string;
    }[];
  },
) {
  return (
    <div class="card">
      <Table
        head={["Team", "Access", "Since", ""]}
        empty="Not shared with another team."
        testId="shares"
        rows={shares.map((x) => [
          <span key="team">
            {x.target_team_name} <code>{x.target_team_id}</code>
          </span>,
          x.access,
          <When key="since" at={x.created_at} />,
          <form key="revoke" method="post" action={`/${kind}/${record.id}/shares/${x.id}/revoke`}>
            <Csrf token={user.session.csrf} />
            <button type="submit" class="danger">Stop sharing</button>
          </form>,
        ])}
      />
      <form method="post" action={`/${kind}/${record.id}/share`} class="row">
        <Csrf token={user.session.csrf} />
        <div>
          <label for="share-team">Team id</label>
          <input id="share-team" name="team_id" required placeholder="the other team's id" />
        </div>
        <div>
          <label for="share-access">Access</label>
          <select id="share-access" name="access">
            <option value="read">read</option>
            <option value="write">read and write</option>
          </select>
        </div>
        <button type="submit">Share</button>
      </form>
      <p class="muted">
        Your team's id is{" "}
        <code>{user.team.id}</code>; the other team's owner finds theirs on the Team page.
      </p>
    </div>
  );
}

/** The filters of a kind's list: its own filter fields (types, references), then the owner. */
export async function kindFilters(
  s: Services,
  teamId: string,
  kind: ResourceKind,
): Promise<FilterSpec[]> {
  const fields = fieldsOf(kind, true);
  const out: FilterSpec[] = [];
  for (const name of KINDS[kind].filters) {
    const field = fields.find((f) => f.name === name);
    if (!field) continue;
    const label = field.label.replace(/ \(.*\)$/, "");
    if (field.options) {
      out.push({ name, label, options: anyOf(field.options.map((o) => ({ value: o, label: o }))) });
    } else if (field.to) {
      const choices = (await refChoices(s, teamId, [field.to]))[field.to] ?? [];
      out.push({
        name,
        label,
        options: anyOf(choices.map((r) => ({ value: r.id, label: r.name }))),
      });
    }
  }
  return [...out, SHARED_FILTER];
}

/** A page of the records a list page shows, with the search and filters of `state`. */
export function visiblePage(
  s: Services,
  user: UiUser,
  kind: ResourceKind,
  state: ListState,
  extra: { status?: string } = {},
) {
  const where = Object.fromEntries(
    KINDS[kind].filters.map((f) => [f, state.filters[f] || undefined]),
  );
  return findVisible(s.store, s.resources, kind, user.team.id, {
    limit: state.limit,
    cursor: state.cursor,
    name: state.name || undefined,
    where,
    shared: (state.filters.shared || "include") as SharedScope,
    ...extra,
  });
}

/** Mounts the list, create, edit, delete and share pages of the kinds. */
export function mountResourcePages(ui: Hono<AppEnv>, s: Services): void {
  for (const kind of LISTED_KINDS) {
    ui.get(
      `/${kind}`,
      page(s, async (c, user) => {
        const state = listState(c, `/${kind}`, await kindFilters(s, user.team.id, kind));
        return await orFirstPage(c, state, async () => {
          const found = await visiblePage(s, user, kind, state);
          const hasType = ["endpoints", "backends", "middleware"].includes(kind);
          return c.html(
            <Layout title={kindTitle(kind)} user={user} active={`/${kind}`}>
              <h1>{kindTitle(kind)} of {user.team.name}</h1>
              <p class="muted">
                {KINDS[kind].what}. Records other teams share with {user.team.name}{" "}
                are listed after its own, with their team.
              </p>
              <p>
                <a class="button" href={`/${kind}/new`}>New {KINDS[kind].one}</a>
              </p>
              <ListControls state={state} what={kind} />
              <Table
                head={[
                  "Name",
                  ...(hasType ? ["Type"] : []),
                  "Description",
                  "Team",
                  "Updated",
                ]}
                empty={emptyText(state, kind)}
                testId={kind}
                rows={found.items.map(({ record: r, access, team }) => [
                  <a key="a" href={editUrl(kind, r.id)}>{r.name}</a>,
                  ...(hasType ? [(r as unknown as { type: string }).type] : []),
                  (r as unknown as { description?: string }).description ?? "",
                  <OwnerCell key="team" access={access} team={team.name} />,
                  <When key="when" at={r.updated_at} />,
                ])}
              />
              <Pager state={state} next={found.next_cursor} shown={found.items.length} />
            </Layout>,
          );
        });
      }),
    );
  }

  for (const kind of FORM_KINDS) {
    ui.get(`/${kind}/new`, page(s, (c, user) => formPage(c, s, user, kind, null)));
    ui.post(
      `/${kind}/new`,
      form(s, async (c, user, _f, params) => {
        const fields = fieldsOf(kind, true);
        const parsed = parseForm(fields, params);
        const saved = await saveRecord(s, user, kind, null, parsed, fields);
        if (saved.ok) return c.redirect(editUrl(kind, saved.record.id), 303);
        return formPage(c, s, user, kind, null, {
          values: parsed.body,
          raw: parsed.raw,
          errors: saved.errors,
        });
      }),
    );
    ui.get(
      `/${kind}/:id/edit`,
      page(s, async (c, user) => {
        const seen = await s.resources.visible(kind, user.team.id, c.req.param("id")!);
        if (!seen) return notFoundPage(c, user, KINDS[kind].one);
        if (seen.access === "read") {
          return sharedRecordPage(c, s, user, kind, seen as Visible<AnyRecord>);
        }
        return formPage(c, s, user, kind, seen.record as AnyRecord, {}, seen.access);
      }),
    );
    ui.post(
      `/${kind}/:id/edit`,
      form(s, async (c, user, _f, params) => {
        const seen = await s.resources.visible(kind, user.team.id, c.req.param("id")!);
        if (!seen) return notFoundPage(c, user, KINDS[kind].one);
        if (seen.access === "read") return readOnlyRefused(c, user, kind, seen.record.id);
        const record = seen.record as AnyRecord;
        const fields = fieldsOf(kind, false);
        const parsed = parseForm(fields, params);
        const saved = await saveRecord(s, user, kind, record.id, parsed, fields);
        if (saved.ok) return c.redirect(editUrl(kind, record.id), 303);
        return formPage(c, s, user, kind, record, {
          values: { ...record, ...parsed.body },
          raw: parsed.raw,
          errors: saved.errors,
        }, seen.access);
      }),
    );
  }

  for (const kind of Object.keys(KINDS) as ResourceKind[]) {
    mountDeleteAndShare(ui, s, kind);
  }
}

function mountDeleteAndShare(ui: Hono<AppEnv>, s: Services, kind: ResourceKind): void {
  const one = KINDS[kind].one;
  const confirmPage = (
    c: Context<AppEnv>,
    user: UiUser,
    record: AnyRecord,
    problem?: { message: string; usedBy: { kind: string; id: string; name?: string }[] },
  ) =>
    c.html(
      <Layout title={`Delete ${record.name}`} user={user} active={`/${kind}`}>
        <div class="card narrow">
          <h1>Delete {one} {record.name}?</h1>
          {problem
            ? (
              <>
                <Flash kind="error" message={problem.message} />
                {problem.usedBy.length > 0 && (
                  <ul data-testid="used-by">
                    {problem.usedBy.map((u) => (
                      <li key={u.id}>
                        <a
                          href={u.kind === "pipelines"
                            ? `/pipelines/${u.id}`
                            : editUrl(u.kind as ResourceKind, u.id)}
                        >
                          {u.kind} {u.name ?? u.id}
                        </a>
                      </li>
                    ))}
                  </ul>
                )}
              </>
            )
            : <p>This cannot be undone. Gateways using it get a configuration without it.</p>}
          <form method="post" action={`/${kind}/${record.id}/delete`} class="row">
            <Csrf token={user.session.csrf} />
            <button type="submit" class="danger">Delete</button>
            <a href={editUrl(kind, record.id)}>Cancel</a>
          </form>
        </div>
      </Layout>,
      problem ? 409 : 200,
    );

  ui.get(
    `/${kind}/:id/delete`,
    page(s, async (c, user) => {
      const record = await s.resources.get(kind, user.team.id, c.req.param("id")!);
      if (!record) return notFoundPage(c, user, one);
      return confirmPage(c, user, record as AnyRecord);
    }),
  );
  ui.post(
    `/${kind}/:id/delete`,
    form(s, async (c, user) => {
      const record = await s.resources.get(kind, user.team.id, c.req.param("id")!);
      if (!record) return notFoundPage(c, user, one);
      try {
        await s.resources.delete(kind, user.team.id, user.actor, record.id);
      } catch (err) {
        const api = toApiError(err);
        if (!api || api.status >= 500) throw err;
        const usedBy = (api.details?.used_by ?? []) as {
          kind: string;
          id: string;
          name?: string;
        }[];
        return confirmPage(c, user, record as AnyRecord, { message: api.message, usedBy });
      }
      return c.redirect(kind === "gateways" || kind === "pipelines" ? `/${kind}` : `/${kind}`, 303);
    }),
  );
  ui.post(
    `/${kind}/:id/share`,
    form(s, async (c, user, f) => {
      const id = c.req.param("id")!;
      const record = await s.resources.get(kind, user.team.id, id);
      if (!record) return notFoundPage(c, user, one);
      try {
        await s.shares.share(user.team.id, user.actor, {
          resource_kind: kind,
          resource_id: id,
          team_id: (f.team_id ?? "").trim(),
          access: f.access === "write" ? "write" : "read",
        });
      } catch (err) {
        const api = toApiError(err);
        if (!api || api.status >= 500) throw err;
        return shareProblem(c, user, kind, id, api.message);
      }
      return c.redirect(shareBack(kind, id), 303);
    }),
  );
  ui.post(
    `/${kind}/:id/shares/:shareId/revoke`,
    form(s, async (c, user) => {
      const id = c.req.param("id")!;
      const share = await s.store.shares.get(user.team.id, c.req.param("shareId")!);
      if (!share || share.resource_id !== id) return notFoundPage(c, user, "share");
      await s.shares.revoke(user.team.id, user.actor, share.id);
      return c.redirect(shareBack(kind, id), 303);
    }),
  );
}

function shareBack(kind: ResourceKind, id: string): string {
  return kind === "pipelines" ? `/pipelines/${id}` : editUrl(kind, id);
}

function shareProblem(
  c: Context<AppEnv>,
  user: UiUser,
  kind: ResourceKind,
  id: string,
  message: string,
) {
  return c.html(
    <Layout title="Cannot share" user={user} active={`/${kind}`}>
      <div class="card narrow">
        <h1>Cannot share</h1>
        <Flash kind="error" message={message} />
        <p>
          <a href={shareBack(kind, id)}>Back</a>
        </p>
      </div>
    </Layout>,
    422,
  );
}
