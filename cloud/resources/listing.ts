/**
 * Lists of the records a team sees: its own, then those other teams shared with it, as one
 * sequence of pages with the same name, field and status filters. A cursor says which part it
 * continues (`o.<cursor>` in the team's own records, `s.<cursor>` in the shares it received);
 * with `shared: "exclude"` it is the plain cursor of `GET /api/<kind>`.
 */
import {
  type AnyRecord,
  BadCursorError,
  type IncomingShare,
  K,
  listPageMapped,
  type ResourceKind,
  type Store,
} from "../store/mod.ts";
import type { Access, ListQuery, ResourceService } from "./service.ts";

/** Which records a list holds: the team's own (`exclude`), also shared ones, or only those. */
export type SharedScope = "exclude" | "include" | "only";

/** The scopes, for validation. */
export const SHARED_SCOPES: readonly SharedScope[] = ["exclude", "include", "only"];

/** A list query with its scope. */
export interface VisibleQuery extends ListQuery {
  shared: SharedScope;
}

/** One record of a list: as the API shows it, the caller's access, and its owning team. */
export interface ListedRecord {
  record: AnyRecord;
  access: Access;
  team: { id: string; name: string };
}

/** A page of the records of `kind` that `teamId` sees, own ones first. */
export async function findVisible(
  store: Store,
  resources: ResourceService,
  kind: ResourceKind,
  teamId: string,
  query: VisibleQuery,
): Promise<{ items: ListedRecord[]; next_cursor: string | null }> {
  const names = new Map<string, string>();
  const teamOf = async (id: string) => {
    if (!names.has(id)) names.set(id, (await store.identity.team(id))?.name ?? "(deleted team)");
    return { id, name: names.get(id)! };
  };
  const own = async (records: AnyRecord[]) => {
    const team = await teamOf(teamId);
    return records.map((record) => ({ record, access: "owner" as const, team }));
  };
  if (query.shared === "exclude") {
    const page = await resources.find(kind, teamId, query);
    return { items: await own(page.items), next_cursor: page.next_cursor };
  }
  let phase = query.shared === "only" ? "s" : "o";
  let cursor: string | undefined;
  if (query.cursor) {
    const m = /^([os])\.(.*)$/s.exec(query.cursor);
    if (!m || (m[1] === "o" && query.shared === "only")) throw new BadCursorError();
    [phase, cursor] = [m[1], m[2] || undefined];
  }
  const items: ListedRecord[] = [];
  if (phase === "o") {
    const page = await resources.find(kind, teamId, { ...query, cursor });
    items.push(...await own(page.items));
    if (page.next_cursor) return { items, next_cursor: `o.${page.next_cursor}` };
    cursor = undefined;
  }
  const room = query.limit - items.length;
  const matches = resources.matcher(kind, query);
  // A full page of own records: look one shared record ahead to know whether a next page exists.
  const shared = await listPageMapped<IncomingShare, ListedRecord>(
    store.kv,
    [...K.sharesIn(teamId), kind],
    {
      limit: Math.max(room, 1),
      cursor,
      map: async (entry) => {
        const record = await resources.get(kind, entry.value.owner_team_id, entry.key[4] as string);
        if (!record || (matches && !(await matches(record)))) return null;
        return {
          record: await resources.view(kind, record, false),
          access: entry.value.access,
          team: await teamOf(entry.value.owner_team_id),
        };
      },
    },
  );
  if (room === 0) return { items, next_cursor: shared.items.length ? "s." : null };
  items.push(...shared.items);
  return { items, next_cursor: shared.next_cursor ? `s.${shared.next_cursor}` : null };
}
