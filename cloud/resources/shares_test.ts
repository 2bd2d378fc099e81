/**
 * ShareService and ResourceService.find over an in-memory KV: who may share what with whom, and
 * what a list with a name and field filters returns. The REST routes and MCP tools that sit on
 * them are tested end to end in tests/cloud_isolation_test.ts and tests/mcp_isolation_test.ts.
 */
import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { ManualClock } from "../clock.ts";
import { type Actor, Store, StoreError } from "../store/mod.ts";
import { ResourceService } from "./service.ts";
import { ShareService } from "./shares.ts";

async function world() {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock();
  const store = new Store(kv, clock);
  const resources = new ResourceService(store, "http://localhost:8443", clock);
  const shares = new ShareService(store, resources);
  const user = (email: string) =>
    store.identity.createUser({ email, name: email, passwordHash: "x", teamName: email });
  const ada = await user("ada@example.com");
  const bob = await user("bob@example.com");
  const actor = (u: typeof ada): Actor => ({ type: "user", id: u.user.id, label: u.user.email });
  return { kv, clock, store, resources, shares, ada, bob, actor };
}

Deno.test("shares: a team shares its own record with another team, once; revoke ends it", async () => {
  const w = await world();
  try {
    const spec = [{ operation: "shift", spec: { a: "b" } }];
    const t = await w.resources.create("transforms", w.ada.team.id, w.actor(w.ada), {
      name: "to_fhir",
      description: "",
      spec,
      sha256: "", // computed by the service
    });
    const request = {
      resource_kind: "transforms" as const,
      resource_id: t.id,
      team_id: w.bob.team.id,
      access: "read" as const,
    };
    const share = await w.shares.share(w.ada.team.id, w.actor(w.ada), request);
    assertEquals([share.resource_id, share.target_team_id, share.access], [
      t.id,
      w.bob.team.id,
      "read",
    ]);
    assertEquals((await w.shares.outgoing(w.ada.team.id)).map((s) => s.id), [share.id]);
    assertEquals((await w.shares.incoming(w.bob.team.id)).map((s) => s.id), [share.id]);
    assertEquals((await w.resources.visible("transforms", w.bob.team.id, t.id))?.access, "read");

    const again = await assertRejects(
      () => w.shares.share(w.ada.team.id, w.actor(w.ada), request),
      /already shared/,
    );
    assertEquals((again as StoreError).code, "conflict");
    // Bob cannot share Ada's record onwards, nor share with his own team or a team that is not.
    for (
      const [team, body, message] of [
        [w.bob.team.id, { ...request, team_id: w.ada.team.id }, /transform not found/],
        [w.ada.team.id, { ...request, team_id: w.ada.team.id }, /team not found/],
        [w.ada.team.id, { ...request, team_id: crypto.randomUUID() }, /team not found/],
      ] as const
    ) {
      const err = await assertRejects(() => w.shares.share(team, w.actor(w.ada), body), message);
      assertEquals((err as StoreError).code, "not_found");
    }

    await w.shares.revoke(w.ada.team.id, w.actor(w.ada), share.id);
    assertEquals(await w.resources.visible("transforms", w.bob.team.id, t.id), null);
    await assertRejects(
      () => w.shares.revoke(w.ada.team.id, w.actor(w.ada), share.id),
      /share not found/,
    );
  } finally {
    w.kv.close();
  }
});

Deno.test("find: name substring (a gateway's code too) and the kind's exact filters only", async () => {
  const w = await world();
  try {
    const team = w.ada.team.id;
    const actor = w.actor(w.ada);
    const berlin = await w.resources.create("gateways", team, actor, {
      code: "edge-berlin-1",
      name: "Berlin",
      description: "",
    });
    w.clock.advance(5); // lists are oldest first, by id: a later millisecond sorts after
    await w.resources.create("gateways", team, actor, {
      code: "edge-paris-1",
      name: "Paris",
      description: "",
    });
    const names = async (query: Parameters<ResourceService["find"]>[2]) =>
      (await w.resources.find("gateways", team, query)).items.map((r) => r.name);
    assertEquals(await names({ limit: 10 }), ["Berlin", "Paris"]);
    assertEquals(await names({ limit: 10, name: "PAR" }), ["Paris"]);
    assertEquals(await names({ limit: 10, name: "berlin-1" }), ["Berlin"]);
    // Gateways have no filter fields: `where` cannot reach other record fields.
    assertEquals(await names({ limit: 10, where: { id: berlin.id } }), ["Berlin", "Paris"]);
    // Listed gateways carry their status, as GET /api/gateways shows them.
    const [first] = (await w.resources.find("gateways", team, { limit: 1 })).items;
    assertEquals((first as { status?: string }).status, "pending");

    await w.resources.create("pipelines", team, actor, {
      name: "on_berlin",
      description: "",
      gateway_id: berlin.id,
      endpoint_ids: [],
      middleware_ids: [],
      backend_ids: [],
    } as never);
    w.clock.advance(5);
    await w.resources.create("pipelines", team, actor, {
      name: "unplaced",
      description: "",
      gateway_id: null,
      endpoint_ids: [],
      middleware_ids: [],
      backend_ids: [],
    } as never);
    const placed = await w.resources.find("pipelines", team, {
      limit: 10,
      where: { gateway_id: berlin.id },
    });
    assertEquals(placed.items.map((r) => r.name), ["on_berlin"]);
  } finally {
    w.kv.close();
  }
});
