/**
 * Invitations over REST: team owners invite an address (the answer carries the code and link,
 * once), list and revoke; the invited user accepts with a user token. The rules live in
 * resources/invitations.ts, shared with the web UI.
 *
 * One file per route: its documentation beside its handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { AppEnv } from "../env.ts";
 * import { Registry } from "../registry.ts";
 * import { mountInvitations } from "./mod.ts";
 *
 * // Mounting documents every route in the registry (the OpenAPI document and docs read it).
 * const reg = new Registry(new Hono<AppEnv>());
 * mountInvitations(reg);
 * console.log(reg.routes.some((r) => r.method === "post" && r.path === "/api/team/invitations")); // true
 * ```
 *
 * @module
 */
import type { Registry } from "../registry.ts";
import { listInvitationsRoute } from "./list_invitations.ts";
import { createInvitationRoute } from "./create_invitation.ts";
import { revokeInvitationRoute } from "./revoke_invitation.ts";
import { acceptInvitationRoute } from "./accept_invitation.ts";

/** Mounts `/api/team/invitations` and `/api/invitations/accept`. */
export function mountInvitations(reg: Registry): void {
  reg.group("/api/team/invitations", (g) =>
    g.mount(
      listInvitationsRoute,
      createInvitationRoute,
      revokeInvitationRoute,
    ));
  reg.group("/api/invitations", (g) =>
    g.mount(
      acceptInvitationRoute,
    ));
}
