/** What the routes of this folder share: examples, request bodies, middleware and helpers. */
import type { GatewayRecord } from "../../store/mod.ts";
import type { Services } from "../../services.ts";
import { notFound } from "../errors.ts";
import { EXAMPLE_IDS } from "../examples.ts";
import { requireBearer } from "../middleware.ts";

/** The credentials these routes accept, as documented. */
export const AUTH = ["user_token", "api_token"] as const;

/** The documented 404 answer of the gateway routes. */
export const GATEWAY_404 = {
  description: "No such gateway in your team",
  example: { error: { code: "not_found", message: "gateway not found" } },
};

/** The example share of the documentation. */
export const SHARE_EXAMPLE = {
  id: "0190f5f0-1111-7222-8333-444455556666",
  team_id: EXAMPLE_IDS.team,
  resource_kind: "transforms",
  resource_id: EXAMPLE_IDS.transforms,
  resource_name: "patient_to_fhir",
  target_team_id: "0190f5d2-6a3c-7c1e-9a51-2b7d4c9e8f22",
  access: "read",
  created_at: "2025-01-16T09:00:00.000Z",
  created_by: "ada@example.com",
};

/** The team's gateway `id`; 404 when the team has none. */
export async function ownGateway(s: Services, teamId: string, id: string): Promise<GatewayRecord> {
  const gw = await s.store.repos.gateways.get(teamId, id);
  if (!gw) throw notFound("gateway");
  return gw;
}

/** The routes of this module accept user tokens and API tokens. */
export const auth = requireBearer("user_token", "api_token");

/** Looks up team names, each once. */
export function teamNames(s: Services): (id: string) => Promise<string> {
  const seen = new Map<string, Promise<string>>();
  return (id) => {
    if (!seen.has(id)) {
      seen.set(id, s.store.identity.team(id).then((t) => t?.name ?? "(deleted team)"));
    }
    return seen.get(id)!;
  };
}
