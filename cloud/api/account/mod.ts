/**
 * The caller, their teams and members, and API tokens.
 *
 * One file per route: its documentation beside its handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { AppEnv } from "../env.ts";
 * import { Registry } from "../registry.ts";
 * import { mountAccount } from "./mod.ts";
 *
 * // Mounting documents every route in the registry (the OpenAPI document and docs read it).
 * const reg = new Registry(new Hono<AppEnv>());
 * mountAccount(reg);
 * console.log(reg.routes.some((r) => r.method === "get" && r.path === "/api/me")); // true
 * ```
 *
 * @module
 */
import type { Registry } from "../registry.ts";
import { meRoute } from "./me.ts";
import { switchTeamRoute } from "./switch_team.ts";
import { teamsRoute } from "./teams.ts";
import { createTeamRoute } from "./create_team.ts";
import { membersRoute } from "./members.ts";
import { addMemberRoute } from "./add_member.ts";
import { removeMemberRoute } from "./remove_member.ts";
import { apiTokensRoute } from "./api_tokens.ts";
import { createApiTokenRoute } from "./create_api_token.ts";
import { revokeApiTokenRoute } from "./revoke_api_token.ts";
export { tokenView } from "./common.ts";

/** Mounts `/api/me`, `/api/teams`, `/api/team/members` and `/api/tokens`. */
export function mountAccount(reg: Registry): void {
  reg.group("/api", (g) =>
    g.mount(
      meRoute,
      switchTeamRoute,
      teamsRoute,
      createTeamRoute,
      membersRoute,
      addMemberRoute,
      removeMemberRoute,
      apiTokensRoute,
      createApiTokenRoute,
      revokeApiTokenRoute,
    ));
}
