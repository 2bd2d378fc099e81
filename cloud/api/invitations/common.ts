/** What the routes of this folder share: examples, request bodies, middleware and helpers. */
import type { InvitationView } from "../../resources/mod.ts";
import { requireBearer } from "../middleware.ts";

/** The example invitation of the documentation. */
export const EXAMPLE: InvitationView = {
  id: "0190f610-2222-7333-8444-555566667777",
  team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
  email: "grace@example.com",
  role: "member",
  created_at: "2025-01-16T09:00:00.000Z",
  created_by: "ada@example.com",
  expires_at: "2025-01-23T09:00:00.000Z",
  accepted_at: null,
  accepted_by: null,
  revoked_at: null,
  revoked_by: null,
  state: "pending",
};

/** An example invitation code (shortened). */
export const CODE_EXAMPLE = "gwi_pQ3x…";

/** The documented 403 answer: only team owners manage invitations. */
export const OWNERS_ONLY = {
  description: "The caller is not an owner of the team",
  example: { error: { code: "forbidden", message: "only team owners manage invitations" } },
};

/** These routes accept user tokens and API tokens. */
export const auth = requireBearer("user_token", "api_token");
