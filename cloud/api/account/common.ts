/** What the routes of this folder share: examples, request bodies, middleware and helpers. */
import type { ApiTokenRecord } from "../../store/mod.ts";
import { requireBearer } from "../middleware.ts";

/** The example user of the documentation. */
export const USER_EXAMPLE = {
  id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f10",
  email: "ada@example.com",
  name: "Ada Lovelace",
  current_team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
  created_at: "2025-01-15T09:30:00.000Z",
  updated_at: "2025-01-15T09:30:00.000Z",
};

/** The example team of the documentation. */
export const TEAM_EXAMPLE = {
  id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f11",
  name: "Radiology",
  role: "owner",
};

/** The example API token record of the documentation. */
export const TOKEN_EXAMPLE = {
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

/** The credentials these routes accept, as documented. */
export const USER_AUTH = ["user_token", "api_token"] as const;

/** An API token as shown (no hash). */
export function tokenView(r: ApiTokenRecord): Omit<ApiTokenRecord, "hash"> {
  const { hash: _, ...rest } = r;
  return rest;
}

/** The routes of this module accept user tokens and API tokens. */
export const auth = requireBearer("user_token", "api_token");
