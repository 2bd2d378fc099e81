/** @jsxImportSource hono/jsx */
/** The audit log of the current team. */
import type { Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { BadCursorError, listAudit } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { page } from "./guard.tsx";
import { Layout, Table, When } from "./layout.tsx";

const PAGE = 50;

/** Mounts `/audit`. */
export function mountAuditPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/audit",
    page(s, async (c, user) => {
      let entries;
      try {
        entries = await listAudit(s.store.kv, user.team.id, {
          limit: PAGE,
          cursor: c.req.query("cursor") || undefined,
        });
      } catch (err) {
        if (!(err instanceof BadCursorError)) throw err;
        return c.redirect("/audit");
      }
      return c.html(
        <Layout title="Audit log" user={user} active="/audit">
          <h1>Audit log of {user.team.name}</h1>
          <Table
            head={["When", "Who", "What", "Record", "Changed"]}
            empty="Nothing happened yet."
            testId="audit"
            rows={entries.items.map((e) => [
              <When key="when-35-15" at={e.at} />,
              e.actor.label,
              <code key="code-37-15">{e.action}</code>,
              `${e.resource.kind}/${e.resource.name ?? e.resource.id}`,
              e.changed?.join(", ") ?? "",
            ])}
          />
          {entries.next_cursor && (
            <p>
              <a href={`/audit?cursor=${encodeURIComponent(entries.next_cursor)}`}>
                Older entries →
              </a>
            </p>
          )}
        </Layout>,
      );
    }),
  );
}
