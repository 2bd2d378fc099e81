/**
 * InvitationService over an in-memory KV: an invitation accepted twice at the same moment joins
 * once (the other gets a refusal), and a new account made from it joins the inviting team only.
 * The REST routes and pages on it are tested in tests/cloud_invitations_test.ts.
 */
import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { ManualClock } from "../clock.ts";
import { Store, StoreError } from "../store/mod.ts";
import { InvitationService } from "./invitations.ts";
import type { TeamCaller } from "./teams.ts";

Deno.test("invitations: one of two simultaneous accepts wins; a new account joins only that team", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new Store(kv, new ManualClock());
    const invitations = new InvitationService(
      store,
      "https://cloud.example.com/",
      new ManualClock(),
    );
    const account = (email: string) =>
      store.identity.createUser({ email, name: email, passwordHash: "x", teamName: email });
    const ada = await account("ada@example.com");
    const owner: TeamCaller = {
      user: ada.user,
      team: ada.team,
      role: "owner",
      actor: { type: "user", id: ada.user.id, label: "ada@example.com" },
    };
    const grace = await account("grace@example.com");
    const issued = await invitations.invite(owner, { email: "grace@example.com", role: "member" });
    assertEquals(issued.url, `https://cloud.example.com/invitations/accept?code=${issued.code}`);
    const outcomes = await Promise.allSettled([
      invitations.accept(grace.user, issued.code),
      invitations.accept(grace.user, issued.code),
    ]);
    assertEquals(outcomes.filter((o) => o.status === "fulfilled").length, 1);
    const refused = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    assertEquals((refused.reason as StoreError).code, "conflict");
    assertEquals((await store.identity.membership(ada.team.id, grace.user.id))?.role, "member");

    const forNew = await invitations.invite(owner, { email: "judy@example.com", role: "owner" });
    const made = await invitations.acceptNewAccount(forNew.code, {
      name: "Judy",
      passwordHash: "y",
    });
    assertEquals(made.user.current_team_id, ada.team.id);
    assertEquals(
      (await store.identity.teamsOf(made.user.id)).map((t) => [t.team.name, t.role]),
      [[ada.team.name, "owner"]],
    );
    const again = await assertRejects(
      () => invitations.acceptNewAccount(forNew.code, { name: "Judy", passwordHash: "y" }),
      /already used/,
    );
    assertEquals((again as StoreError).details?.state, "accepted");
  } finally {
    kv.close();
  }
});
