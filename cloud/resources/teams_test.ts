/**
 * TeamService over an in-memory KV: only owners manage members, a member must have an account,
 * owners see and revoke every API token of the team and members only their own. The REST routes
 * and web pages that sit on it are tested in tests/cloud_service_test.ts and tests/cloud_ui_test.ts.
 */
import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { ManualClock } from "../clock.ts";
import { type Actor, type ApiTokenRecord, Store, StoreError } from "../store/mod.ts";
import { type TeamCaller, TeamService } from "./teams.ts";

Deno.test("teams: owners manage members and every token; members their own tokens only", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new Store(kv, new ManualClock());
    const teams = new TeamService(store);
    const account = (email: string) =>
      store.identity.createUser({ email, name: email, passwordHash: "x", teamName: email });
    const ada = await account("ada@example.com");
    const bob = await account("bob@example.com");
    const actor = (id: string, label: string): Actor => ({ type: "user", id, label });
    const owner: TeamCaller = {
      user: ada.user,
      team: ada.team,
      role: "owner",
      actor: actor(ada.user.id, "ada"),
    };

    const refusal = async (run: () => Promise<unknown>, code: string, message: RegExp) => {
      const err = await assertRejects(run, message);
      assertEquals((err as StoreError).code, code);
    };
    await refusal(
      () => teams.addMember(owner, "nobody@example.com", "member"),
      "not_found",
      /user/,
    );
    const added = await teams.addMember(owner, " BOB@example.com ", "member");
    assertEquals([added.user_id, added.role], [bob.user.id, "member"]);
    const member: TeamCaller = {
      user: bob.user,
      team: ada.team,
      role: "member",
      actor: actor(bob.user.id, "bob"),
    };
    await refusal(
      () => teams.addMember(member, "ada@example.com", "member"),
      "forbidden",
      /owners/,
    );
    await refusal(() => teams.removeMember(member, ada.user.id), "forbidden", /owners/);

    const token = (id: string, userId: string): ApiTokenRecord => ({
      id,
      team_id: ada.team.id,
      user_id: userId,
      name: id,
      prefix: "gwk_",
      hash: crypto.randomUUID(),
      created_at: "2026-11-25T00:00:00.000Z",
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    });
    await store.tokens.addApiToken(token("ada-token", ada.user.id), owner.actor);
    await store.tokens.addApiToken(token("bob-token", bob.user.id), member.actor);
    const ids = async (caller: TeamCaller) => (await teams.apiTokens(caller)).map((t) => t.id);
    assertEquals((await ids(owner)).sort(), ["ada-token", "bob-token"]);
    assertEquals(await ids(member), ["bob-token"]);
    // A member cannot revoke (nor learn of) another's token; the owner can revoke any.
    await refusal(() => teams.revokeApiToken(member, "ada-token"), "not_found", /API token/);
    assertEquals((await teams.revokeApiToken(owner, "bob-token")).revoked_at !== null, true);
    await refusal(() => teams.revokeApiToken(owner, "no-such"), "not_found", /API token/);

    await teams.removeMember(owner, bob.user.id);
    assertEquals((await store.identity.members(ada.team.id)).map((m) => m.user.id), [ada.user.id]);
  } finally {
    kv.close();
  }
});
