/** @jsxImportSource hono/jsx */
/** The audit log of the current team: search, an action filter, pages. */
import type { Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { listAudit } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { page } from "./guard.tsx";
import { Layout, Table, When } from "./layout.tsx";
import {
  anyOf,
  type FilterSpec,
  ListControls,
  listState,
  narrowed,
  orFirstPage,
  Pager,
} from "./list_controls.tsx";

/** The action filter of the audit log (a prefix, as the API's `action`). */
const ACTION_FILTER: FilterSpec = {
  name: "action",
  label: "Action",
  options: anyOf(
    [
      "gateway.",
      "pipeline.",
      "endpoint.",
      "backend.",
      "middleware.",
      "transform.",
      "service.",
      "network.",
      "share.",
      "member.",
      "invitation.",
      "api_token.",
      "machine_token.",
      "team.",
    ].map((v) => ({ value: v, label: `${v}*` })),
  ),
};

/** Mounts `/audit`. */
export function mountAuditPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/audit",
    page(s, (c, user) => {
      const state = listState(c, "/audit", [ACTION_FILTER]);
      return orFirstPage(c, state, async () => {
        const entries = await listAudit(s.store.kv, user.team.id, {
          limit: state.limit,
          cursor: state.cursor,
          action: state.filters.action || undefined,
          text: state.name || undefined,
        });
        return c.html(
          <Layout title="Audit log" user={user} active="/audit">
            <h1>Audit log of {user.team.name}</h1>
            <ListControls state={state} what="the audit log" searchHint="who, or a record's name" />
            <Table
              head={["When", "Who", "What", "Record", "Changed"]}
              empty={narrowed(state) ? "No entries match this search." : "Nothing happened yet."}
              testId="audit"
              rows={entries.items.map((e) => [
                <When key="when" at={e.at} />,
                e.actor.label,
                <code key="code">{e.action}</code>,
                `${e.resource.kind}/${e.resource.name ?? e.resource.id}`,
                e.changed?.join(", ") ?? "",
              ])}
            />
            <Pager state={state} next={entries.next_cursor} shown={entries.items.length} />
          </Layout>,
        );
      });
    }),
  );
}
