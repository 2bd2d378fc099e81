/** @jsxImportSource hono/jsx */
/** Teams: switch, create, and (owners) add or remove members. */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import type { Services } from "../services.ts";
import { StoreError } from "../store/mod.ts";
import { form, page } from "./guard.tsx";
import { Csrf, Flash, Layout, Table, When } from "./layout.tsx";
import { currentUser, safeNext, type UiUser } from "./session.ts";

async function teamsPage(
  c: Context<AppEnv>,
  s: Services,
  user: UiUser,
  flash?: { kind: "ok" | "error"; message: string },
) {
  const members = await s.store.identity.members(user.team.id);
  const owner = user.role === "owner";
  return c.html(
    <Layout title="Team" user={user} active="/teams">
      <h1>
        Team <span data-testid="team-name">{user.team.name}</span>
      </h1>
      {flash && <Flash kind={flash.kind} message={flash.message} />}
      <h2>Your teams</h2>
      <Table
        head={["Team", "Role", ""]}
        empty="No teams."
        testId="teams"
        rows={user.teams.map((t) => [
          t.team.name,
          t.role,
          t.team.id === user.team.id
            ? <span key="span-34-15" class="muted">current</span>
            : (
              <form method="post" action="/teams/switch">
                <Csrf token={user.session.csrf} />
                <input type="hidden" name="team_id" value={t.team.id} />
                <input type="hidden" name="back" value="/teams" />
                <button type="submit" class="secondary">Switch to {t.team.name}</button>
              </form>
            ),
        ])}
      />
      <h2>Members of {user.team.name}</h2>
      <Table
        head={["Email", "Name", "Role", "Since", ""]}
        empty="No members."
        testId="members"
        rows={members.map((m) => [
          m.user.email,
          m.user.name,
          m.role,
          <When key="when-54-11" at={m.since} />,
          owner && m.user.id !== user.user.id
            ? (
              <form method="post" action="/teams/members/remove">
                <Csrf token={user.session.csrf} />
                <input type="hidden" name="user_id" value={m.user.id} />
                <button type="submit" class="danger">Remove</button>
              </form>
            )
            : "",
        ])}
      />
      {owner && (
        <form method="post" action="/teams/members" class="card row">
          <Csrf token={user.session.csrf} />
          <div>
            <label for="member-email">Add a member by email</label>
            <input id="member-email" name="email" type="email" required />
          </div>
          <div>
            <label for="member-role">Role</label>
            <select id="member-role" name="role">
              <option value="member">member</option>
              <option value="owner">owner</option>
            </select>
          </div>
          <button type="submit">Add</button>
        </form>
      )}
      <h2>New team</h2>
      <form method="post" action="/teams" class="card row">
        <Csrf token={user.session.csrf} />
        <div>
          <label for="team-name">Name</label>
          <input id="team-name" name="name" required maxlength={100} />
        </div>
        <button type="submit">Create team</button>
      </form>
    </Layout>,
    flash?.kind === "error" ? 400 : 200,
  );
}

/** The page's wording of a refused membership change. */
function memberRefusal(err: StoreError): string {
  if (err.code === "forbidden") return "Only team owners manage members.";
  if (err.field === "email") return "No account has this email; ask them to sign up first.";
  return err.message;
}

/** Mounts `/teams` and its forms (including the header's team switcher). */
export function mountTeamPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get("/teams", page(s, (c, user) => teamsPage(c, s, user)));

  ui.post(
    "/teams/switch",
    form(s, async (c, user, f) => {
      try {
        await s.store.identity.switchTeam(user.user.id, f.team_id ?? "");
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return teamsPage(c, s, user, {
          kind: "error",
          message: "You are not a member of that team.",
        });
      }
      return c.redirect(safeNext(f.back), 303);
    }),
  );

  ui.post(
    "/teams",
    form(s, async (c, user, f) => {
      const name = (f.name ?? "").trim();
      if (!name || name.length > 100) {
        return teamsPage(c, s, user, {
          kind: "error",
          message: "Name the team (1-100 characters).",
        });
      }
      await s.store.identity.createTeam(user.user, name);
      return teamsPage(c, s, (await currentUser(c, s))!, {
        kind: "ok",
        message: `Team ${name} created; it is now your current team.`,
      });
    }),
  );

  ui.post(
    "/teams/members",
    form(s, async (c, user, f) => {
      const email = (f.email ?? "").trim();
      try {
        await s.teams.addMember(user, email, f.role === "owner" ? "owner" : "member");
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return teamsPage(c, s, user, { kind: "error", message: memberRefusal(err) });
      }
      return teamsPage(c, s, user, {
        kind: "ok",
        message: `${email.toLowerCase()} is now a member of ${user.team.name}.`,
      });
    }),
  );

  ui.post(
    "/teams/members/remove",
    form(s, async (c, user, f) => {
      try {
        await s.teams.removeMember(user, f.user_id ?? "");
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return teamsPage(c, s, user, { kind: "error", message: memberRefusal(err) });
      }
      return teamsPage(c, s, user, { kind: "ok", message: "Member removed." });
    }),
  );
}
