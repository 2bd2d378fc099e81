/** @jsxImportSource hono/jsx */
/** GET `/gateways`: the team's gateways and those shared with it, filtered and paged. */
import type { Hono } from "hono";
import type { AppEnv } from "../../api/mod.ts";
import type { GatewayView } from "../../resources/mod.ts";
import type { Services } from "../../services.ts";
import { page } from "../guard.tsx";
import { Layout, Status, Table, When } from "../layout.tsx";
import {
  anyOf,
  emptyText,
  type FilterSpec,
  ListControls,
  listState,
  orFirstPage,
  Pager,
  SHARED_FILTER,
} from "../list_controls.tsx";
import { visiblePage } from "../resource_pages.tsx";
import { OwnerCell } from "../shared_pages.tsx";

/** The status filter of the gateway list. */
const STATUS_FILTER: FilterSpec = {
  name: "status",
  label: "Status",
  options: anyOf(
    ["pending", "online", "degraded", "offline"].map((v) => ({ value: v, label: v })),
  ),
};

/** Mounts GET `/gateways`: the team's gateways and those shared with it, filtered and paged. */
export function mountGatewayList(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/gateways",
    page(s, async (c, user) => {
      const state = listState(c, "/gateways", [STATUS_FILTER, SHARED_FILTER]);
      return await orFirstPage(c, state, async () => {
        const found = await visiblePage(s, user, "gateways", state, {
          status: state.filters.status || undefined,
        });
        return c.html(
          <Layout title="Gateways" user={user} active="/gateways">
            <h1>Gateways of {user.team.name}</h1>
            <p class="muted">
              A gateway appears here when it is authorized (<code>gwcli gateway:authorize</code>,
              {" "}
              <code>gwcli token:get</code> or{" "}
              <code>POST /api/gateway/authorize</code>), or when you add it here first. Gateways
              other teams share with {user.team.name} are listed after its own.
            </p>
            <p>
              <a class="button" href="/gateways/new">New gateway</a>
            </p>
            <ListControls state={state} what="gateways" searchHint="part of the code or name" />
            <Table
              head={[
                "Code",
                "Name",
                "Status",
                "Last seen",
                "Desired version",
                "Applied version",
                "Health",
                "Team",
              ]}
              empty={emptyText(state, "gateways")}
              testId="gateways"
              rows={found.items.map(({ record, access, team }) => {
                const g = record as GatewayView;
                return [
                  <a key="a" href={`/gateways/${g.id}`}>{g.code}</a>,
                  g.name,
                  <Status key="status" status={g.status} />,
                  <When key="when" at={g.last_seen_at} />,
                  g.config_version ?? "—",
                  g.applied_version ?? "—",
                  g.last_status?.health ?? "—",
                  <OwnerCell key="team" access={access} team={team.name} />,
                ];
              })}
            />
            <Pager state={state} next={found.next_cursor} shown={found.items.length} />
          </Layout>,
        );
      });
    }),
  );
}
