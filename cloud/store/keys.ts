/**
 * The KV key layout, in one place. Everything a team owns lives under `["t", teamId, …]`, so a
 * repository that builds its keys from the caller's team id cannot reach another team's records.
 * Global keys hold identities and indexes from a secret's hash to its owner.
 */

/** The resource kinds of the REST API (plural, as in the URL). */
export const RESOURCE_KINDS = [
  "gateways",
  "services",
  "endpoints",
  "backends",
  "middleware",
  "transforms",
  "pipelines",
  "networks",
] as const;

/** A resource kind. */
export type ResourceKind = typeof RESOURCE_KINDS[number];

/** Key builders. */
export const K = {
  user: (userId: string) => ["users", userId],
  userByEmail: (email: string) => ["users_by_email", email.toLowerCase()],
  team: (teamId: string) => ["teams", teamId],
  userTeam: (userId: string, teamId: string) => ["user_teams", userId, teamId],
  userTeams: (userId: string) => ["user_teams", userId],
  session: (hash: string) => ["sessions", hash],
  signingKey: (kid: string) => ["signing_keys", kid],
  signingKeys: () => ["signing_keys"],
  activeSigningKey: () => ["signing_active"],
  apiTokenByHash: (hash: string) => ["api_token_hash", hash],
  device: (hash: string) => ["device", hash],
  deviceByUserCode: (userCode: string) => ["device_user_code", userCode],
  oauthClient: (clientId: string) => ["oauth_clients", clientId],
  oauthCode: (hash: string) => ["oauth_codes", hash],
  oauthRefresh: (hash: string) => ["oauth_refresh", hash],

  teamPrefix: (teamId: string) => ["t", teamId],
  member: (teamId: string, userId: string) => ["t", teamId, "members", userId],
  members: (teamId: string) => ["t", teamId, "members"],
  record: (teamId: string, kind: ResourceKind, id: string) => ["t", teamId, "r", kind, id],
  records: (teamId: string, kind: ResourceKind) => ["t", teamId, "r", kind],
  name: (teamId: string, kind: ResourceKind, key: string) => ["t", teamId, "name", kind, key],
  ref: (teamId: string, to: ResourceKind, toId: string, from: ResourceKind, fromId: string) => [
    "t",
    teamId,
    "refs",
    to,
    toId,
    from,
    fromId,
  ],
  refsTo: (teamId: string, to: ResourceKind, toId: string) => ["t", teamId, "refs", to, toId],
  touch: (teamId: string, kind: ResourceKind, id: string) => ["t", teamId, "touch", kind, id],
  revision: (teamId: string) => ["t", teamId, "rev"],
  audit: (teamId: string, id: string) => ["t", teamId, "audit", id],
  audits: (teamId: string) => ["t", teamId, "audit"],
  apiToken: (teamId: string, id: string) => ["t", teamId, "api_tokens", id],
  apiTokens: (teamId: string) => ["t", teamId, "api_tokens"],
  machineToken: (teamId: string, gatewayId: string, jti: string) => [
    "t",
    teamId,
    "machine_tokens",
    gatewayId,
    jti,
  ],
  machineTokens: (teamId: string, gatewayId: string) => ["t", teamId, "machine_tokens", gatewayId],
  oauthGrant: (teamId: string, id: string) => ["t", teamId, "oauth_grants", id],
  oauthGrants: (teamId: string) => ["t", teamId, "oauth_grants"],
  gatewayState: (teamId: string, gatewayId: string) => ["t", teamId, "gw_state", gatewayId],
  gatewayConfig: (teamId: string, gatewayId: string) => ["t", teamId, "gw_config", gatewayId],
  configVersion: (teamId: string, gatewayId: string, version: number) => [
    "t",
    teamId,
    "gw_versions",
    gatewayId,
    version,
  ],
  configVersions: (teamId: string, gatewayId: string) => ["t", teamId, "gw_versions", gatewayId],
  configVersionText: (teamId: string, gatewayId: string, version: number) => [
    "t",
    teamId,
    "gw_version_text",
    gatewayId,
    version,
  ],
  configVersionTexts: (teamId: string, gatewayId: string) => [
    "t",
    teamId,
    "gw_version_text",
    gatewayId,
  ],
  statusSample: (teamId: string, gatewayId: string, minute: number) => [
    "t",
    teamId,
    "gw_series",
    gatewayId,
    minute,
  ],
  statusSamples: (teamId: string, gatewayId: string) => ["t", teamId, "gw_series", gatewayId],
  gatewayPin: (teamId: string, gatewayId: string) => ["t", teamId, "gw_pin", gatewayId],
  reportedConfig: (teamId: string, gatewayId: string) => ["t", teamId, "gw_reported", gatewayId],
  reportedChunk: (teamId: string, gatewayId: string, i: number) => [
    "t",
    teamId,
    "gw_reported",
    gatewayId,
    "chunk",
    i,
  ],
  share: (teamId: string, shareId: string) => ["t", teamId, "shares", shareId],
  shares: (teamId: string) => ["t", teamId, "shares"],
  shareIn: (targetTeamId: string, kind: ResourceKind, id: string) => [
    "t",
    targetTeamId,
    "shares_in",
    kind,
    id,
  ],
  sharesIn: (targetTeamId: string) => ["t", targetTeamId, "shares_in"],
  shareByResource: (teamId: string, kind: ResourceKind, id: string, shareId: string) => [
    "t",
    teamId,
    "shares_by_res",
    kind,
    id,
    shareId,
  ],
  sharesByResource: (teamId: string, kind: ResourceKind, id: string) => [
    "t",
    teamId,
    "shares_by_res",
    kind,
    id,
  ],
} satisfies Record<string, (...args: never[]) => Deno.KvKey>;
