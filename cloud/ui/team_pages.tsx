/** @jsxImportSource hono/jsx */
/**
 * Teams: the current team, switch, create (without switching), and for owners: invite by e-mail
 * address (the link is shown once), revoke invitations, add or remove members.
 */
import type { Context, Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import { INVITATION_DAYS, type IssuedInvitation, MAX_INVITATION_DAYS } from "../resources/mod.ts";
import type { Services } from "../services.ts";
import {
  INVITATION_STATES,
  type InvitationRecord,
  type InvitationState,
  invitationState,
  type Page,
  StoreError,
} from "../store/mod.ts";
import { form, page } from "./guard.tsx";
import { Csrf, Flash, Layout, Table, When } from "./layout.tsx";
import {
  anyOf,
  emptyText,
  type FilterSpec,
  ListControls,
  type ListState,
  listState,
  orFirstPage,
  Pager,
} from "./list_controls.tsx";
import { currentUser, safeNext, type UiUser } from "./session.ts";

/** The state filter of the invitation list. */
const STATE_FILTER: FilterSpec = {
  name: "state",
  label: "State",
  options: anyOf(INVITATION_STATES.map((v) => ({ value: v, label: v }))),
};

/** The lifetimes the invitation form offers, days. */
const LIFETIMES = [1, INVITATION_DAYS, MAX_INVITATION_DAYS];

interface TeamsExtra {
  flash?: { kind: "ok" | "error"; message: string };
  /** A team just created: offer to switch to it. */
  created?: { id: string; name: string };
  /** An invitation just made: its link, shown this once. */
  issued?: IssuedInvitation;
}

/** The invitations an owner sees on the page (newest first, searchable). */
async function invitationPage(
  s: Services,
  user: UiUser,
  state: ListState,
): Promise<Page<InvitationRecord>> {
  return await s.invitations.list(user, {
    limit: state.limit,
    cursor: state.cursor,
    email: state.name || undefined,
    state: (state.filters.state || undefined) as InvitationState | undefined,
  });
}

async function teamsPage(c: Context<AppEnv>, s: Services, user: UiUser, extra: TeamsExtra = {}) {
  const members = await s.store.identity.members(user.team.id);
  const owner = user.role === "owner";
  const state = listState(c, "/teams", [STATE_FILTER]);
  const invitations = owner ? await invitationPage(s, user, state) : null;
  const now = s.options.clock.now();
  const issued = extra.issued;
  const mail = issued &&
    `mailto:${encodeURIComponent(issued.record.email)}?subject=${
      encodeURIComponent(`Join ${user.team.name} on Gateway Cloud`)
    }&body=${
      encodeURIComponent(
        `You are invited to the team ${user.team.name}. Open this link to join (it works once, until ${issued.record.expires_at}):\n\n${issued.url}\n`,
      )
    }`;
  return c.html(
    <Layout title="Team" user={user} active="/teams">
      <h1>
        Team <span data-testid="team-name">{user.team.name}</span>
      </h1>
      <p>
        You are working in <strong>{user.team.name}</strong> as{" "}
        {user.role}: every page, token and record you make is this team's until you switch.
      </p>
      {extra.flash && <Flash kind={extra.flash.kind} message={extra.flash.message} />}
      {extra.created && (
        <form method="post" action="/teams/switch" class="card row" data-testid="switch-offer">
          <Csrf token={user.session.csrf} />
          <input type="hidden" name="team_id" value={extra.created.id} />
          <input type="hidden" name="back" value="/teams" />
          <span>
            Team <strong>{extra.created.name}</strong> was created; you are still in{" "}
            {user.team.name}.
          </span>
          <button type="submit">Switch to {extra.created.name}</button>
        </form>
      )}
      {issued && (
        <div class="card" data-testid="invitation-issued">
          <Flash
            kind="ok"
            message={`Invitation for ${issued.record.email} created${
              issued.replaced ? " (the earlier one to this address no longer works)" : ""
            }. Copy the link now: it is not shown again. No e-mail is sent; pass it on yourself.`}
          />
          <p>
            <strong>Link</strong> (works once, until <When at={issued.record.expires_at} />):
          </p>
          <div class="secret" data-testid="invitation-link">{issued.url}</div>
          <p>
            <strong>Code</strong> (to paste on the Team page instead):{" "}
            <code data-testid="invitation-code">{issued.code}</code>
          </p>
          <p>
            <a href={mail}>Write an e-mail with the link</a>
          </p>
        </div>
      )}
      <h2>Your teams</h2>
      <Table
        head={["Team", "Role", ""]}
        empty="No teams."
        testId="teams"
        rows={user.teams.map((t) => [
          t.team.name,
          t.role,
          t.team.id === user.team.id
            ? <strong key="current" data-testid="current-marker">current team</strong>
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
      <p class="muted">
        The id of {user.team.name}, for other teams that share records with it:{" "}
        <code>{user.team.id}</code>
      </p>
      <h2>Members of {user.team.name}</h2>
      <Table
        head={["Email", "Name", "Role", "Since", ""]}
        empty="No members."
        testId="members"
        rows={members.map((m) => [
          m.user.email,
          m.user.name,
          m.role,
          <When key="since" at={m.since} />,
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
        <>
          <h2>Invite someone</h2>
          <p class="muted">
            The invitation is a link for one e-mail address: it works once, until it expires, and
            only for the account with that address (who can also create the account from it). No
            e-mail is sent: copy the link and pass it on.
          </p>
          <form method="post" action="/teams/invitations" class="card row">
            <Csrf token={user.session.csrf} />
            <div>
              <label for="invite-email">Email address</label>
              <input id="invite-email" name="email" type="email" required maxlength={254} />
            </div>
            <div>
              <label for="invite-role">Role</label>
              <select id="invite-role" name="role">
                <option value="member">member</option>
                <option value="owner">owner</option>
              </select>
            </div>
            <div>
              <label for="invite-days">Works for</label>
              <select id="invite-days" name="expires_in_days">
                {LIFETIMES.map((d) => (
                  <option key={d} value={String(d)} selected={d === INVITATION_DAYS}>
                    {d === 1 ? "1 day" : `${d} days`}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit">Create invitation</button>
          </form>
          <h2>Invitations</h2>
          <ListControls state={state} what="invitations" searchHint="part of the address" />
          <Table
            head={["Email", "Role", "Invited by", "Created", "Expires", "State", ""]}
            empty={emptyText(state, "invitations")}
            testId="invitations"
            rows={invitations!.items.map((r) => {
              const st = invitationState(r, now);
              return [
                r.email,
                r.role,
                r.created_by,
                <When key="created" at={r.created_at} />,
                <When key="expires" at={r.expires_at} />,
                st,
                st === "pending"
                  ? (
                    <form method="post" action={`/teams/invitations/${r.id}/revoke`}>
                      <Csrf token={user.session.csrf} />
                      <button type="submit" class="danger">Revoke {r.email}</button>
                    </form>
                  )
                  : "",
              ];
            })}
          />
          <Pager state={state} next={invitations!.next_cursor} shown={invitations!.items.length} />
          <h2>Add an existing account</h2>
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
        </>
      )}
      <h2>Join a team</h2>
      <form method="get" action="/invitations/accept" class="card row">
        <div>
          <label for="join-code">Invitation code</label>
          <input id="join-code" name="code" required maxlength={200} placeholder="gwi_…" />
        </div>
        <button type="submit">Open invitation</button>
      </form>
      <h2>New team</h2>
      <form method="post" action="/teams" class="card row">
        <Csrf token={user.session.csrf} />
        <div>
          <label for="team-name">Name</label>
          <input id="team-name" name="name" required maxlength={100} />
        </div>
        <button type="submit">Create team</button>
      </form>
      <p class="muted">You become its owner; your current team stays until you switch.</p>
    </Layout>,
    extra.flash?.kind === "error" ? 400 : 200,
  );
}

/** The page's wording of a refused membership or invitation change. */
function refusal(err: StoreError, what: "members" | "invitations"): string {
  if (err.code === "forbidden") return `Only team owners manage ${what}.`;
  if (what === "members" && err.field === "email") {
    return "No account has this email; invite the address instead (Invite someone).";
  }
  if (what === "invitations" && err.code === "not_found") return "No such invitation in this team.";
  return err.message;
}

/** Mounts `/teams` and its forms (including the header's team switcher). */
export function mountTeamPages(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/teams",
    page(
      s,
      (c, user) =>
        orFirstPage(c, listState(c, "/teams", [STATE_FILTER]), () => teamsPage(c, s, user)),
    ),
  );

  ui.post(
    "/teams/switch",
    form(s, async (c, user, f) => {
      try {
        await s.store.identity.switchTeam(user.user.id, f.team_id ?? "");
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return teamsPage(c, s, user, {
          flash: { kind: "error", message: "You are not a member of that team." },
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
          flash: { kind: "error", message: "Name the team (1-100 characters)." },
        });
      }
      const team = await s.store.identity.createTeam(user.user, name);
      return teamsPage(c, s, (await currentUser(c, s))!, {
        flash: { kind: "ok", message: `Team ${name} created; you are its owner.` },
        created: { id: team.id, name: team.name },
      });
    }),
  );

  ui.post(
    "/teams/invitations",
    form(s, async (c, user, f) => {
      const days = Number(f.expires_in_days || INVITATION_DAYS);
      try {
        const issued = await s.invitations.invite(user, {
          email: (f.email ?? "").trim(),
          role: f.role === "owner" ? "owner" : "member",
          expiresInDays: days,
        });
        c.header("Cache-Control", "no-store");
        return teamsPage(c, s, user, { issued });
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return teamsPage(c, s, user, {
          flash: { kind: "error", message: refusal(err, "invitations") },
        });
      }
    }),
  );

  ui.post(
    "/teams/invitations/:id/revoke",
    form(s, async (c, user) => {
      try {
        const r = await s.invitations.revoke(user, c.req.param("id")!);
        return teamsPage(c, s, user, {
          flash: { kind: "ok", message: `The invitation for ${r.email} no longer works.` },
        });
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return teamsPage(c, s, user, {
          flash: { kind: "error", message: refusal(err, "invitations") },
        });
      }
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
        return teamsPage(c, s, user, {
          flash: { kind: "error", message: refusal(err, "members") },
        });
      }
      return teamsPage(c, s, user, {
        flash: {
          kind: "ok",
          message: `${email.toLowerCase()} is now a member of ${user.team.name}.`,
        },
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
        return teamsPage(c, s, user, {
          flash: { kind: "error", message: refusal(err, "members") },
        });
      }
      return teamsPage(c, s, user, { flash: { kind: "ok", message: "Member removed." } });
    }),
  );
}
