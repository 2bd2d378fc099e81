/** @jsxImportSource hono/jsx */
/**
 * Records another team shared with the current one, as their pages show them: the owning team by
 * name, what the share allows, and the record's fields as text. A read share (and a shared
 * pipeline or gateway, whose editors work on the team's own records only) gets this page with no
 * form at all. A reference is named only when the current team can see that record too (its own,
 * or shared with it); the owner's other records stay out of sight, not even their ids.
 */
import type { Context } from "hono";
import type { FC } from "hono/jsx";
import type { AppEnv } from "../api/mod.ts";
import { type Access, KINDS, type Visible } from "../resources/mod.ts";
import type { AnyRecord, GatewayRecord, ResourceKind } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { Layout, Status, When } from "./layout.tsx";
import { fieldsOf } from "./resource_forms.tsx";
import type { UiUser } from "./session.ts";

/** The name of team `id` (as the owner of shared records). */
export async function teamName(s: Services, id: string): Promise<string> {
  return (await s.store.identity.team(id))?.name ?? "(deleted team)";
}

/** Says whose record this is and what the current team may do with it. */
export const SharedNotice: FC<{ access: Access; owner: string; team: string }> = (
  { access, owner, team },
) => (
  <div class="flash flash-ok" role="status" data-testid="shared-notice">
    Shared with {team} by <strong data-testid="owner-team">{owner}</strong>
    {access === "write"
      ? ", read and write: your team can change it, not delete or share it."
      : ", read-only: your team can use it, not change it."}
  </div>
);

/** How a reference is shown: its name, or that it is not shared with the team. */
interface RefLabel {
  id: string;
  label: string | null;
}

/** Names the records `ids` of `kind` that the team can see; the others stay unnamed. */
async function refLabels(
  s: Services,
  teamId: string,
  kind: ResourceKind,
  ids: string[],
): Promise<RefLabel[]> {
  return await Promise.all(ids.map(async (id) => {
    const seen = await s.resources.visible(kind, teamId, id);
    const r = seen?.record as AnyRecord | undefined;
    return {
      id,
      label: r ? (kind === "gateways" ? (r as GatewayRecord).code : r.name) : null,
    };
  }));
}

const Refs: FC<{ refs: RefLabel[] }> = ({ refs }) => {
  const named = refs.filter((r) => r.label !== null);
  const hidden = refs.length - named.length;
  if (!refs.length) return <span class="muted">none</span>;
  return (
    <span>
      {named.map((r) => r.label).join(", ")}
      {hidden > 0 && (
        <span class="muted">
          {named.length ? "; " : ""}
          {hidden} not shared with your team
        </span>
      )}
    </span>
  );
};

function text(value: unknown) {
  if (value === null || value === undefined || value === "") return <span class="muted">—</span>;
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    return value.length ? value.join(", ") : <span class="muted">none</span>;
  }
  if (typeof value === "object") return <pre>{JSON.stringify(value, null, 2)}</pre>;
  return String(value);
}

/** The read-only page of a record another team shared with the current one. */
export async function sharedRecordPage(
  c: Context<AppEnv>,
  s: Services,
  user: UiUser,
  kind: ResourceKind,
  seen: Visible<AnyRecord>,
): Promise<Response> {
  const record = seen.record;
  const values = record as unknown as Record<string, unknown>;
  const rows: [string, unknown][] = [];
  for (const f of fieldsOf(kind, true)) {
    if (f.kind === "ref" || f.kind === "refs") {
      const ids = f.kind === "ref"
        ? (values[f.name] ? [String(values[f.name])] : [])
        : (values[f.name] as string[] | undefined) ?? [];
      rows.push([
        f.label,
        <Refs key={f.name} refs={await refLabels(s, user.team.id, f.to!, ids)} />,
      ]);
    } else rows.push([f.label, text(values[f.name])]);
  }
  if (kind === "pipelines") {
    const p = record as unknown as Record<string, string[]>;
    for (
      const [label, to, field] of [
        ["Endpoints", "endpoints", "endpoint_ids"],
        ["Middleware (applied in this order)", "middleware", "middleware_ids"],
        ["Backends (the first is the primary)", "backends", "backend_ids"],
      ] as const
    ) {
      rows.push([
        label,
        <Refs key={field} refs={await refLabels(s, user.team.id, to, p[field] ?? [])} />,
      ]);
    }
  }
  if (kind === "gateways") {
    const view = await s.resources.gatewayView(record as GatewayRecord);
    rows.push(["Status", <Status key="status" status={view.status} />]);
    rows.push(["Last seen", <When key="seen" at={view.last_seen_at} />]);
  }
  rows.push(["Updated", <When key="updated" at={record.updated_at} />]);
  const one = KINDS[kind].one;
  const title = kind === "gateways" ? (record as GatewayRecord).code : record.name;
  return c.html(
    <Layout title={`${one} ${title}`} user={user} active={`/${kind}`}>
      <h1>
        {one[0].toUpperCase() + one.slice(1)} {title}
      </h1>
      <SharedNotice
        access={seen.access}
        owner={await teamName(s, record.team_id)}
        team={user.team.name}
      />
      {seen.access === "write" && kind === "pipelines" && (
        <p class="muted">
          The builder edits your own team's pipelines only; change this one through the API (<code>
            PATCH /api/pipelines/{record.id}
          </code>) or an MCP client.
        </p>
      )}
      {seen.access === "write" && kind === "gateways" && (
        <p>
          <a href={`/gateways/${record.id}/edit`}>Edit its name and description</a>
        </p>
      )}
      <dl class="card record-fields" data-testid="record-fields">
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p>
        <a href={`/${kind}?shared=only`}>All {kind} shared with {user.team.name}</a>
      </p>
    </Layout>,
  );
}

/** The owner column of a list: the team's name, and the access of a shared record. */
export const OwnerCell: FC<{ access: Access; team: string }> = ({ access, team }) => (
  <span>
    <span data-testid="owner-team">{team}</span>
    {access !== "owner" && (
      <span class="muted">
        {` (shared, ${access === "write" ? "read and write" : "read-only"})`}
      </span>
    )}
  </span>
);

/** The answer to a form posted on a record shared read-only (no page offers one). */
export function readOnlyRefused(
  c: Context<AppEnv>,
  user: UiUser,
  kind: ResourceKind,
  id: string,
): Response | Promise<Response> {
  return c.html(
    <Layout title="Read-only" user={user} active={`/${kind}`}>
      <div class="card narrow">
        <h1>Read-only</h1>
        <p role="alert">
          This {KINDS[kind].one} is shared with your team read-only: it cannot be changed here.
        </p>
        <p>
          <a
            href={kind === "pipelines" || kind === "gateways"
              ? `/${kind}/${id}`
              : `/${kind}/${id}/edit`}
          >
            Back to it
          </a>
        </p>
      </div>
    </Layout>,
    403,
  );
}
