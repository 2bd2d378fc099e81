/** The caller, their teams and members, and API tokens. */
import { z } from "zod";
import { createApiToken as issueApiToken } from "../auth/mod.ts";
import type { ApiTokenRecord } from "../store/mod.ts";
import { publicUser } from "../store/mod.ts";
import type { Context } from "hono";
import type { AppEnv } from "./env.ts";
import { readJson } from "./body.ts";
import { requireBearer, userOf, userTokenOf } from "./middleware.ts";
import type { Registry } from "./registry.ts";
import { oneOf, PAGE_QUERY, pageParams } from "./list_params.ts";

const TOKEN_STATES = ["active", "revoked", "expired"] as const;

const USER_EXAMPLE = {
  id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f10",
  email: "ada@example.com",
  name: "Ada Lovelace",
  current_team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
  created_at: "2025-01-15T09:30:00.000Z",
  updated_at: "2025-01-15T09:30:00.000Z",
};
const TEAM_EXAMPLE = {
  id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
  name: "Radiology",
  role: "owner",
};
const TOKEN_EXAMPLE = {
  id: "0190f5e0-11aa-7b2c-8d3e-4f5a6b7c8d9e",
  team_id: TEAM_EXAMPLE.id,
  user_id: USER_EXAMPLE.id,
  name: "ci-deploy",
  prefix: "gwc_Xy12ab",
  created_at: "2025-01-15T10:00:00.000Z",
  expires_at: null,
  last_used_at: "2025-01-16T08:12:40.000Z",
  revoked_at: null,
};
const USER_AUTH = ["user_token", "api_token"] as const;

/** An API token as shown (no hash). */
export function tokenView(r: ApiTokenRecord): Omit<ApiTokenRecord, "hash"> {
  const { hash: _, ...rest } = r;
  return rest;
}

const switchBody = z.strictObject({ team_id: z.uuid() });
const teamBody = z.strictObject({ name: z.string().trim().min(1).max(100) });
const memberBody = z.strictObject({
  email: z.email(),
  role: z.enum(["owner", "member"]).default("member"),
});
const tokenBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  expires_in_days: z.int().min(1).max(3650).nullable().default(null),
});

/** The routes of this module accept user tokens and API tokens. */
const auth = requireBearer("user_token", "api_token");

/** Mounts `/api/me`, `/api/teams`, `/api/team/members` and `/api/tokens`. */
export function mountAccount(reg: Registry): void {
  reg.group("/api", (g) => {
    g.add(
      {
        method: "get",
        path: "/api/me",
        tag: "Account",
        summary: "The caller: user, current team, role, teams, and the credential used",
        auth: [...USER_AUTH],
        responses: {
          200: {
            description: "The caller",
            example: {
              user: USER_EXAMPLE,
              team: TEAM_EXAMPLE,
              teams: [TEAM_EXAMPLE],
              credential: { kind: "user_token" },
            },
          },
          401: {
            description: "No valid token",
            example: { error: { code: "unauthorized", message: "token expired" } },
          },
        },
      },
      auth,
      me,
    );
    g.add(
      {
        method: "put",
        path: "/api/me/current-team",
        tag: "Account",
        summary: "Switch the current team (user tokens; answers a new user token for that team)",
        description: "API tokens stay bound to the team they were created in and cannot switch.",
        auth: ["user_token"],
        body: { schema: switchBody, example: { team_id: TEAM_EXAMPLE.id } },
        responses: {
          200: {
            description: "Switched",
            example: {
              team: TEAM_EXAMPLE,
              access_token: "eyJhbGciOiJSUzI1NiIs…",
              expires_in: 86400,
            },
          },
          403: {
            description: "Called with an API token",
            example: {
              error: { code: "forbidden", message: "API tokens are bound to their team" },
            },
          },
          404: {
            description: "Not a member of that team",
            example: { error: { code: "not_found", message: "team not found" } },
          },
        },
      },
      auth,
      switchTeam,
    );
    g.add(
      {
        method: "get",
        path: "/api/teams",
        tag: "Teams",
        summary: "Teams the caller belongs to",
        auth: [...USER_AUTH],
        responses: { 200: { description: "Teams", example: { items: [TEAM_EXAMPLE] } } },
      },
      auth,
      teams,
    );
    g.add(
      {
        method: "post",
        path: "/api/teams",
        tag: "Teams",
        summary: "Create a team (the caller becomes its owner; the current team stays)",
        description:
          "The caller's current team does not change: switch with `PUT /api/me/current-team`.",
        auth: ["user_token"],
        body: { schema: teamBody, example: { name: "Cardiology" } },
        responses: {
          201: { description: "Created", example: { ...TEAM_EXAMPLE, name: "Cardiology" } },
        },
      },
      auth,
      createTeam,
    );
    g.add(
      {
        method: "get",
        path: "/api/team/members",
        tag: "Teams",
        summary: "Members of the current team",
        auth: [...USER_AUTH],
        responses: {
          200: {
            description: "Members",
            example: {
              items: [{
                user: { id: USER_EXAMPLE.id, email: USER_EXAMPLE.email, name: USER_EXAMPLE.name },
                role: "owner",
                since: USER_EXAMPLE.created_at,
              }],
            },
          },
        },
      },
      auth,
      members,
    );
    g.add(
      {
        method: "post",
        path: "/api/team/members",
        tag: "Teams",
        summary: "Add an existing user to the current team, or change their role (owners only)",
        auth: [...USER_AUTH],
        body: { schema: memberBody, example: { email: "grace@example.com", role: "member" } },
        responses: {
          200: {
            description: "Added",
            example: { user_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f99", role: "member" },
          },
          403: {
            description: "Caller is not an owner",
            example: { error: { code: "forbidden", message: "only team owners manage members" } },
          },
          404: {
            description: "No user with that email",
            example: { error: { code: "not_found", message: "user not found" } },
          },
        },
      },
      auth,
      addMember,
    );
    g.add(
      {
        method: "delete",
        path: "/api/team/members/:userId",
        tag: "Teams",
        summary: "Remove a member from the current team (owners only; never the last owner)",
        auth: [...USER_AUTH],
        responses: {
          204: { description: "Removed" },
          404: {
            description: "Not a member",
            example: { error: { code: "not_found", message: "member not found" } },
          },
          409: {
            description: "Last owner",
            example: {
              error: {
                code: "conflict",
                message: "a team needs at least one owner; add another owner first",
              },
            },
          },
        },
      },
      auth,
      removeMember,
    );
    g.add(
      {
        method: "get",
        path: "/api/tokens",
        tag: "API tokens",
        summary: "API tokens of the current team (owners see all, members their own)",
        description: "Newest first. `next_cursor` is present while more pages follow.",
        auth: [...USER_AUTH],
        query: [
          ...PAGE_QUERY,
          {
            name: "name",
            type: "string",
            description: "Only tokens whose name contains this text (case-insensitive).",
          },
          {
            name: "state",
            type: "string",
            description: "Only tokens in this state: `active`, `revoked` or `expired`.",
          },
        ],
        responses: {
          200: {
            description: "Tokens, newest first (never the token text)",
            example: { items: [TOKEN_EXAMPLE], next_cursor: null },
          },
          422: {
            description: "A bad `limit`, `cursor` or `state`",
            example: {
              error: {
                code: "validation_failed",
                message: "state: one of active, revoked, expired",
                fields: [{ field: "state", message: "one of active, revoked, expired" }],
              },
            },
          },
        },
      },
      auth,
      apiTokens,
    );
    g.add(
      {
        method: "post",
        path: "/api/tokens",
        tag: "API tokens",
        summary:
          "Create an API token in the current team (user tokens only); the token text is shown once",
        auth: ["user_token"],
        body: { schema: tokenBody, example: { name: "ci-deploy", expires_in_days: 90 } },
        responses: {
          201: {
            description: "Created; `token` appears in this answer only",
            example: { ...TOKEN_EXAMPLE, token: "gwc_Xy12abQ3…" },
          },
          403: {
            description: "Called with an API token",
            example: {
              error: { code: "forbidden", message: "API tokens cannot create API tokens" },
            },
          },
        },
      },
      auth,
      createApiToken,
    );
    g.add(
      {
        method: "delete",
        path: "/api/tokens/:id",
        tag: "API tokens",
        summary: "Revoke an API token (your own, or any of the team as an owner)",
        auth: [...USER_AUTH],
        responses: {
          200: {
            description: "Revoked",
            example: { ...TOKEN_EXAMPLE, revoked_at: "2025-01-17T12:00:00.000Z" },
          },
          404: {
            description: "No such token in this team",
            example: { error: { code: "not_found", message: "API token not found" } },
          },
        },
      },
      auth,
      revokeApiToken,
    );
  });
}

/** GET /api/me: The caller: user, current team, role, teams, and the credential used. */
async function me(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const teams = await s.store.identity.teamsOf(p.user.id);
  return c.json({
    user: publicUser(p.user),
    team: { id: p.team.id, name: p.team.name, role: p.role },
    teams: teams.map((t) => ({ id: t.team.id, name: t.team.name, role: t.role })),
    credential: p.kind === "api_token"
      ? {
        kind: "api_token",
        id: p.apiToken!.id,
        name: p.apiToken!.name,
        expires_at: p.apiToken!.expires_at,
      }
      : { kind: p.kind },
  });
}

/**
 * PUT /api/me/current-team:
 * Switch the current team (user tokens; answers a new user token for that team).
 */
async function switchTeam(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userTokenOf(c, "API tokens are bound to their team; use a user token");
  const body = await readJson(c, switchBody);
  const user = await s.store.identity.switchTeam(p.user.id, body.team_id);
  const team = (await s.store.identity.team(body.team_id))!;
  const role = (await s.store.identity.membership(team.id, user.id))!.role;
  const ttl = s.options.userTokenTtlSeconds;
  const { token } = await s.jwt.issueUserToken(user, team, ttl);
  return c.json({
    team: { id: team.id, name: team.name, role },
    access_token: token,
    expires_in: ttl,
  });
}

/** GET /api/teams: Teams the caller belongs to. */
async function teams(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const teams = await s.store.identity.teamsOf(p.user.id);
  return c.json({
    items: teams.map((t) => ({ id: t.team.id, name: t.team.name, role: t.role })),
  });
}

/** POST /api/teams: Create a team (the caller becomes its owner; the current team stays). */
async function createTeam(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userTokenOf(c, "API tokens are bound to their team; use a user token");
  const body = await readJson(c, teamBody);
  const team = await s.store.identity.createTeam(p.user, body.name);
  return c.json({ id: team.id, name: team.name, role: "owner" }, 201);
}

/** GET /api/team/members: Members of the current team. */
async function members(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userOf(c);
  const members = await s.store.identity.members(p.team.id);
  return c.json({
    items: members.map((m) => ({
      user: { id: m.user.id, email: m.user.email, name: m.user.name },
      role: m.role,
      since: m.since,
    })),
  });
}

/**
 * POST /api/team/members:
 * Add an existing user to the current team, or change their role (owners only).
 */
async function addMember(c: Context<AppEnv>): Promise<Response> {
  const body = await readJson(c, memberBody);
  const m = await c.get("services").teams.addMember(userOf(c), body.email, body.role);
  return c.json({ user_id: m.user_id, role: m.role });
}

/**
 * DELETE /api/team/members/:userId:
 * Remove a member from the current team (owners only; never the last owner).
 */
async function removeMember(c: Context<AppEnv>): Promise<Response> {
  await c.get("services").teams.removeMember(userOf(c), c.req.param("userId")!);
  return c.body(null, 204);
}

/** GET /api/tokens: API tokens of the current team (owners see all, members their own). */
async function apiTokens(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const state = oneOf(c, "state", TOKEN_STATES);
  const page = await s.teams.apiTokenPage(userOf(c), {
    ...pageParams(c),
    name: c.req.query("name") || undefined,
    state,
  }, s.options.clock.now());
  return c.json({ items: page.items.map(tokenView), next_cursor: page.next_cursor ?? null });
}

/**
 * POST /api/tokens:
 * Create an API token in the current team (user tokens only); the token text is shown once.
 */
async function createApiToken(c: Context<AppEnv>): Promise<Response> {
  const s = c.get("services");
  const p = userTokenOf(
    c,
    "API tokens cannot create API tokens; use a user token or the web UI",
  );
  const body = await readJson(c, tokenBody);
  const { token, record } = await issueApiToken(s, {
    userId: p.user.id,
    teamId: p.team.id,
    name: body.name,
    expiresInDays: body.expires_in_days,
  }, p.actor);
  c.header("Cache-Control", "no-store");
  return c.json({ ...tokenView(record), token }, 201);
}

/** DELETE /api/tokens/:id: Revoke an API token (your own, or any of the team as an owner). */
async function revokeApiToken(c: Context<AppEnv>): Promise<Response> {
  const revoked = await c.get("services").teams.revokeApiToken(userOf(c), c.req.param("id")!);
  return c.json(tokenView(revoked));
}
