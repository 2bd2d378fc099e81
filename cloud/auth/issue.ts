/** Issuing API tokens and machine tokens. Secrets are returned once and never stored. */
import { iso } from "../clock.ts";
import type { Actor, ApiTokenRecord, GatewayRecord, MachineTokenRecord } from "../store/mod.ts";
import { randomBase64Url, sha256Hex, uuidv7 } from "../store/mod.ts";
import type { CloudOptions } from "../options.ts";
import type { Store } from "../store/mod.ts";
import {
  MACHINE_ABILITIES,
  MACHINE_TOKEN_LIFETIME_MS,
  type MachineTokenPayload,
} from "../../shared/mod.ts";
import type { Tokens } from "./jwt.ts";
import { API_TOKEN_PREFIX } from "./principal.ts";

/** What issuing an API token reads and writes: the clock and the token store. */
export interface ApiTokenIssuer {
  options: Pick<CloudOptions, "clock">;
  store: Pick<Store, "tokens">;
}

/** What issuing a machine token uses: {@link ApiTokenIssuer} and the JWT signer. */
export interface MachineTokenIssuer extends ApiTokenIssuer {
  jwt: Pick<Tokens, "issueMachineToken">;
}

/** A renewed machine token's predecessor stays valid this long (in case the answer is lost). */
export const RENEWAL_GRACE_MS = 60 * 60 * 1000;

/** Creates an API token for `userId` in `teamId`; the text is in the answer only. */
export async function createApiToken(
  s: ApiTokenIssuer,
  input: { userId: string; teamId: string; name: string; expiresInDays: number | null },
  actor: Actor,
): Promise<{ token: string; record: ApiTokenRecord }> {
  const now = s.options.clock.now();
  const token = `${API_TOKEN_PREFIX}${randomBase64Url(32)}`;
  const record: ApiTokenRecord = {
    id: uuidv7(now),
    team_id: input.teamId,
    user_id: input.userId,
    name: input.name,
    prefix: token.slice(0, API_TOKEN_PREFIX.length + 6),
    hash: await sha256Hex(token),
    created_at: iso(now),
    expires_at: input.expiresInDays === null ? null : iso(now + input.expiresInDays * 86_400_000),
    last_used_at: null,
    revoked_at: null,
  };
  await s.store.tokens.addApiToken(record, actor);
  return { token, record };
}

/** Issues a machine token for a gateway (renewing `previousJti` when given). */
export async function issueMachineToken(
  s: MachineTokenIssuer,
  gateway: GatewayRecord,
  actor: Actor,
  previousJti?: string,
): Promise<MachineTokenPayload> {
  const now = s.options.clock.now();
  const jti = crypto.randomUUID();
  const expiresAt = Math.floor((now + MACHINE_TOKEN_LIFETIME_MS) / 1000) * 1000;
  const abilities = [...MACHINE_ABILITIES];
  const machineToken = await s.jwt.issueMachineToken({
    jti,
    gatewayId: gateway.id,
    gatewayCode: gateway.code,
    teamId: gateway.team_id,
    abilities,
    expiresAt,
  });
  const record: MachineTokenRecord = {
    jti,
    team_id: gateway.team_id,
    gateway_id: gateway.id,
    issued_at: iso(now),
    expires_at: iso(expiresAt),
    revoked_at: null,
    renewed_from: previousJti ?? null,
    issued_by: previousJti ? "renewal" : actor.label,
    last_used_at: null,
  };
  await s.store.tokens.addMachineToken(
    record,
    actor,
    previousJti ? { previousJti, graceMs: RENEWAL_GRACE_MS } : undefined,
  );
  return {
    machine_token: machineToken,
    expires_at: iso(expiresAt),
    gateway_id: gateway.id,
    gateway_code: gateway.code,
    abilities,
  };
}
