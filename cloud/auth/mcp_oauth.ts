/**
 * The MCP authorization flow (MCP 2025-06-18 "Authorization"): the cloud is both the protected
 * resource (`/mcp/cloud`) and its authorization server. Public clients register themselves (RFC
 * 7591), send the user to the consent page with a PKCE S256 challenge and the resource indicator
 * (RFC 8707), and redeem the code for an access token whose audience is the MCP resource and
 * nothing else, plus a rotating refresh token. Every approval is a grant the user's tokens page
 * lists and can revoke; revoking it ends its access and refresh tokens at once.
 */
import { iso } from "../clock.ts";
import type { CloudOptions } from "../options.ts";
import type { Store } from "../store/mod.ts";
import type { Tokens } from "./jwt.ts";
import type {
  Actor,
  OAuthClientRecord,
  OAuthCodeRecord,
  OAuthGrantRecord,
  Team,
  User,
} from "../store/mod.ts";
import { base64Url, randomBase64Url, sha256Hex, uuidv7 } from "../store/mod.ts";
import { advertisedOrigin, canonicalLoopbackUrl } from "./loopback.ts";

/** Path of the MCP resource; with the base URL it is the resource indicator (RFC 8707). */
export const MCP_RESOURCE_PATH = "/mcp/cloud";
/** The one scope: use of the MCP server as the approving user in the approving team. */
export const MCP_SCOPE = "mcp";
/** Lifetime of an access token. */
export const MCP_ACCESS_TTL_SECONDS = 3600;
/** An authorization code must be redeemed within this. */
export const CODE_TTL_MS = 5 * 60_000;
/** A refresh token unused this long stops working. */
export const REFRESH_IDLE_MS = 30 * 24 * 60 * 60 * 1000;
/** However often refreshed, a grant ends this long after approval (the user approves again). */
export const GRANT_MAX_MS = 90 * 24 * 60 * 60 * 1000;
/** A registered client that is never used is forgotten after this; a used one after 90 days. */
export const UNUSED_CLIENT_MS = 24 * 60 * 60 * 1000;
const USED_CLIENT_MS = 90 * 24 * 60 * 60 * 1000;
/** Prefix of refresh tokens (recognizable by secret scanners). */
export const REFRESH_TOKEN_PREFIX = "gwr_";
/** Prefix of client ids. */
const CLIENT_ID_PREFIX = "mcpc_";
/** Limits of a registration. */
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_NAME_LENGTH = 100;
const MAX_STATE_LENGTH = 1024;
/**
 * Schemes a browser handles itself instead of handing the URI to an application: they run code,
 * read local data, open browser internals or launch arbitrary apps (Android's `intent:`), so a
 * redirect there can only hurt. Schemes ending in `script` are refused besides (isScriptScheme).
 */
const FORBIDDEN_SCHEMES = new Set([
  "data:",
  "file:",
  "blob:",
  "about:",
  "filesystem:",
  "view-source:",
  "ws:",
  "wss:",
  "ftp:",
  "jar:",
  "intent:",
  "chrome:",
  "chrome-extension:",
  "moz-extension:",
  "edge:",
  "resource:",
]);

/** What names the service: its base URL. */
export interface BaseUrl {
  options: Pick<CloudOptions, "baseUrl">;
}

/**
 * What the authorization server reads and writes: the clock and base URL, the OAuth store, the
 * members it checks, and the signer and verifier of MCP access tokens.
 */
export interface OAuthServer {
  options: Pick<CloudOptions, "clock" | "baseUrl">;
  store: Pick<Store, "oauth" | "identity">;
  jwt: Pick<Tokens, "issueMcpAccessToken" | "verifyMcpAccessToken">;
}

/** The resource indicator of the MCP server: `<base URL>/mcp/cloud`. */
export function mcpResource(s: BaseUrl): string {
  return `${s.options.baseUrl}${MCP_RESOURCE_PATH}`;
}

/**
 * The resource indicator as a client that reached the service at `authority` (its Host) must see
 * it: with a loopback base URL, on the loopback alias it used (`127.0.0.1` for `localhost` and
 * the reverse), because the SDKs refuse metadata naming another origin than the one they
 * connected to; otherwise (and for any non-loopback Host) {@link mcpResource}.
 */
export function mcpResourceFor(s: BaseUrl, authority: string | undefined): string {
  return `${advertisedOrigin(s.options.baseUrl, authority)}${MCP_RESOURCE_PATH}`;
}

/** A requested `resource` in the canonical spelling: a loopback alias becomes the base URL's. */
function canonicalResource(s: BaseUrl, resource: string | undefined): string | undefined {
  return resource === undefined ? undefined : canonicalLoopbackUrl(resource, s.options.baseUrl);
}

/** An OAuth error: the RFC 6749 code and a description for people. */
export interface OAuthFailure {
  ok: false;
  error: string;
  description: string;
  /** 401 for client authentication failures, else 400. */
  status?: 400 | 401;
}

function fail(error: string, description: string, status?: 400 | 401): OAuthFailure {
  return { ok: false, error, description, ...(status ? { status } : {}) };
}

/** True for the loopback host names a native client listens on (RFC 8252 §7.3). */
function isLoopbackHost(hostname: string): boolean {
  return hostname === "127.0.0.1" || hostname === "[::1]" || hostname === "localhost";
}

/**
 * True for `javascript:` and every scheme ending in `script` (`vbscript:`, `livescript:`,
 * `x-javascript:`): browsers have run code for several of them, and a new alias must not slip
 * through a list of names.
 */
function isScriptScheme(scheme: string): boolean {
  return scheme.toLowerCase().replace(/:$/, "").endsWith("script");
}

/** Why `uri` cannot be a redirect URI, or null when it can. */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== "string" || uri.length === 0) return "a redirect URI must be a string";
  if (uri.length > MAX_URI_LENGTH) return `a redirect URI is longer than ${MAX_URI_LENGTH}`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URI`;
  }
  // The URL parser drops tabs, newlines and outer spaces (`java\nscript:` parses as `javascript:`):
  // refuse them rather than store a string that means something else than it reads.
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u0020\u007f]/.test(uri)) {
    return `${JSON.stringify(uri)} has spaces or control characters`;
  }
  if (url.hash || uri.includes("#")) return `${uri} has a fragment (RFC 6749 §3.1.2)`;
  if (url.username || url.password) return `${uri} has user information`;
  const scheme = url.protocol; // lower case: the URL parser folds the scheme
  if (isScriptScheme(scheme) || FORBIDDEN_SCHEMES.has(scheme)) {
    return `${uri} uses the forbidden scheme ${scheme}`;
  }
  if (scheme === "https:") return null;
  if (scheme === "http:") {
    return isLoopbackHost(url.hostname)
      ? null
      : `${uri}: plain http is allowed only to a loopback address (127.0.0.1, [::1], localhost)`;
  }
  // A private-use scheme of a native app (RFC 8252 §7.1): reverse-domain (`com.example.app:/cb`)
  // or, unlike RFC 8252 §8.4's SHOULD, a single name (`cursor://`), which MCP clients use;
  // docs/decisions.md says why.
  return /^[a-z][a-z0-9+.-]*:$/.test(scheme) ? null : `${uri} has an invalid scheme`;
}

/**
 * True when the requested redirect URI is the registered one: exactly equal, except that a
 * loopback http URI may use any port (native clients pick a free port per login, RFC 8252 §7.3).
 */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  let a: URL, b: URL;
  try {
    a = new URL(registered);
    b = new URL(requested);
  } catch {
    return false;
  }
  if (a.protocol !== "http:" || !isLoopbackHost(a.hostname)) return false;
  return b.protocol === "http:" && b.hostname === a.hostname && b.pathname === a.pathname &&
    b.search === a.search && !b.hash && !b.username && !b.password;
}

/** What a registration answers (RFC 7591 §3.2.1). */
export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name?: string;
  client_uri?: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: "none";
  scope: string;
}

/** The registration answer of a stored client. */
export function registeredClient(record: OAuthClientRecord): RegisteredClient {
  return {
    client_id: record.client_id,
    client_id_issued_at: Math.floor(Date.parse(record.created_at) / 1000),
    ...(record.client_name ? { client_name: record.client_name } : {}),
    ...(record.client_uri ? { client_uri: record.client_uri } : {}),
    redirect_uris: record.redirect_uris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    scope: MCP_SCOPE,
  };
}

/** Removes control characters and surrounding space from a display string. */
function displayText(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "").trim();
}

/**
 * Registers a public client from RFC 7591 metadata. Values the server does not support are
 * replaced by the ones it does (§3.2.1 allows this): every client is public
 * (`token_endpoint_auth_method: none`) and uses the code and refresh grants.
 */
export async function registerClient(
  s: OAuthServer,
  metadata: Record<string, unknown>,
): Promise<{ ok: true; client: RegisteredClient } | OAuthFailure> {
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) {
    return fail("invalid_redirect_uri", "redirect_uris must be a non-empty array");
  }
  if (uris.length > MAX_REDIRECT_URIS) {
    return fail("invalid_redirect_uri", `at most ${MAX_REDIRECT_URIS} redirect_uris`);
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return fail("invalid_redirect_uri", problem);
  }
  const grantTypes = metadata.grant_types;
  if (
    grantTypes !== undefined &&
    (!Array.isArray(grantTypes) || !grantTypes.includes("authorization_code"))
  ) {
    return fail(
      "invalid_client_metadata",
      "grant_types must include authorization_code (the only interactive grant offered)",
    );
  }
  let name: string | null = null;
  if (metadata.client_name !== undefined) {
    if (typeof metadata.client_name !== "string") {
      return fail("invalid_client_metadata", "client_name must be a string");
    }
    name = displayText(metadata.client_name).slice(0, MAX_NAME_LENGTH) || null;
  }
  let clientUri: string | null = null;
  if (metadata.client_uri !== undefined) {
    const text = metadata.client_uri;
    if (
      typeof text !== "string" || text.length > MAX_URI_LENGTH || !URL.canParse(text) ||
      !/^https?:$/.test(new URL(text).protocol)
    ) {
      return fail("invalid_client_metadata", "client_uri must be an http(s) URL");
    }
    clientUri = text;
  }
  const now = s.options.clock.now();
  const record: OAuthClientRecord = {
    client_id: `${CLIENT_ID_PREFIX}${randomBase64Url(18)}`,
    client_name: name,
    client_uri: clientUri,
    redirect_uris: [...new Set(uris as string[])],
    created_at: iso(now),
    last_used_at: null,
  };
  await s.store.oauth.addClient(record, UNUSED_CLIENT_MS);
  return { ok: true, client: registeredClient(record) };
}

/** A checked authorization request, ready for the consent page. */
export interface AuthorizationRequest {
  client: OAuthClientRecord;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
  scope: string;
}

/** The outcome of checking an authorization request. */
export type AuthorizationCheck =
  | { ok: true; request: AuthorizationRequest }
  /** The client or redirect URI cannot be trusted: show the error, never redirect. */
  | { ok: false; page: string }
  /** A request error the client should hear about at its redirect URI. */
  | { ok: false; redirect: string };

/** The URL of `redirectUri` with `params` added (and `iss`, RFC 9207). */
function withParams(s: BaseUrl, redirectUri: string, params: Record<string, string | undefined>) {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set("iss", s.options.baseUrl);
  return url.href;
}

/** The error redirect of a request whose client and redirect URI are known good. */
export function errorRedirect(
  s: OAuthServer,
  redirectUri: string,
  state: string | undefined,
  error: string,
  description: string,
): string {
  return withParams(s, redirectUri, { error, error_description: description, state });
}

/** The granted scope: `mcp` whatever else was asked (RFC 6749 §3.3 lets the server narrow it). */
function grantedScope(_requested: string | undefined): string {
  return MCP_SCOPE;
}

/**
 * Checks the parameters of an authorization request (RFC 6749 §4.1.1 with PKCE and RFC 8707).
 * The client and the redirect URI are checked first: until both are known good, errors are shown
 * to the user instead of being sent anywhere (§4.1.2.1).
 */
export async function checkAuthorizationRequest(
  s: OAuthServer,
  p: Record<string, string | undefined>,
): Promise<AuthorizationCheck> {
  if (!p.client_id) return { ok: false, page: "The request names no client (client_id)." };
  const client = p.client_id.length <= 100 ? await s.store.oauth.client(p.client_id) : null;
  if (!client) {
    return {
      ok: false,
      page: "This application is not registered here, or its registration expired. " +
        "Start the connection again from the application.",
    };
  }
  let redirectUri: string;
  if (p.redirect_uri) {
    if (!client.redirect_uris.some((r) => redirectUriMatches(r, p.redirect_uri!))) {
      return {
        ok: false,
        page: "The application asked to return to an address it did not register.",
      };
    }
    redirectUri = p.redirect_uri;
  } else if (client.redirect_uris.length === 1) {
    redirectUri = client.redirect_uris[0];
  } else {
    return { ok: false, page: "The request names no redirect_uri." };
  }
  // Registration checks every URI, but a client stored under an older, looser rule keeps its
  // URIs: check again, so that no such URI gets the consent page or a redirect.
  if (redirectUriProblem(redirectUri)) {
    return {
      ok: false,
      page: "The application registered a return address that is not allowed here. " +
        "Register it again with an https, loopback http or app-specific address.",
    };
  }
  const state = p.state;
  const back = (error: string, description: string): AuthorizationCheck => ({
    ok: false,
    redirect: errorRedirect(s, redirectUri, state, error, description),
  });
  if (state !== undefined && state.length > MAX_STATE_LENGTH) {
    return back("invalid_request", `state is longer than ${MAX_STATE_LENGTH} characters`);
  }
  if (p.response_type !== "code") {
    return back("unsupported_response_type", "response_type must be code");
  }
  if (!p.code_challenge) return back("invalid_request", "PKCE is required: send code_challenge");
  if (p.code_challenge_method !== "S256") {
    return back("invalid_request", "code_challenge_method must be S256");
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(p.code_challenge)) {
    return back("invalid_request", "code_challenge must be a base64url SHA-256 (43 characters)");
  }
  const resource = mcpResource(s);
  // A loopback alias of the resource (advertised to a client that connected by it) is the same.
  const requested = canonicalResource(s, p.resource);
  if (requested !== undefined && requested !== resource) {
    return back("invalid_target", `the only resource here is ${resource}`);
  }
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      state,
      codeChallenge: p.code_challenge,
      resource,
      scope: grantedScope(p.scope),
    },
  };
}

/** Issues a code for an approved request; returns the redirect that carries it. */
export async function approveAuthorization(
  s: OAuthServer,
  request: AuthorizationRequest,
  user: User,
  team: Team,
): Promise<string> {
  const now = s.options.clock.now();
  const code = randomBase64Url(32);
  const record: OAuthCodeRecord = {
    client_id: request.client.client_id,
    redirect_uri: request.redirectUri,
    code_challenge: request.codeChallenge,
    resource: request.resource,
    scope: request.scope,
    user_id: user.id,
    team_id: team.id,
    created_at: iso(now),
    expires_at: iso(now + CODE_TTL_MS),
  };
  await s.store.oauth.addCode(await sha256Hex(code), record);
  await s.store.oauth.touchClient(request.client, USED_CLIENT_MS);
  return withParams(s, request.redirectUri, { code, state: request.state });
}

/** The token answer (RFC 6749 §5.1). */
export interface TokenAnswer {
  ok: true;
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** S256: base64url(SHA-256(verifier)) (RFC 7636 §4.2). */
async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64Url(new Uint8Array(digest));
}

async function tokensFor(
  s: OAuthServer,
  grant: OAuthGrantRecord,
  refreshToken: string,
): Promise<TokenAnswer> {
  const access = await s.jwt.issueMcpAccessToken({
    userId: grant.user_id,
    teamId: grant.team_id,
    grantId: grant.id,
    clientId: grant.client_id,
    resource: grant.resource,
    scope: grant.scope,
    ttlSeconds: MCP_ACCESS_TTL_SECONDS,
  });
  return {
    ok: true,
    access_token: access,
    token_type: "Bearer",
    expires_in: MCP_ACCESS_TTL_SECONDS,
    refresh_token: refreshToken,
    scope: grant.scope,
  };
}

/** When a grant refreshed at `now` stops working. */
function grantExpiry(createdAt: number, now: number): number {
  return Math.min(now + REFRESH_IDLE_MS, createdAt + GRANT_MAX_MS);
}

async function memberStill(
  s: Pick<OAuthServer, "store">,
  userId: string,
  teamId: string,
): Promise<boolean> {
  return (await s.store.identity.membership(teamId, userId)) !== null;
}

/** The `authorization_code` grant (RFC 6749 §4.1.3, RFC 7636 §4.6, RFC 8707 §2.2). */
export async function exchangeCode(
  s: OAuthServer,
  p: Record<string, string | undefined>,
): Promise<TokenAnswer | OAuthFailure> {
  if (!p.code || !p.client_id || !p.code_verifier) {
    return fail("invalid_request", "code, client_id and code_verifier are required");
  }
  const client = p.client_id.length <= 100 ? await s.store.oauth.client(p.client_id) : null;
  if (!client) return fail("invalid_client", "unknown client_id", 401);
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(p.code_verifier)) {
    return fail("invalid_grant", "code_verifier must be 43-128 unreserved characters");
  }
  const hash = await sha256Hex(p.code);
  const entry = await s.store.oauth.code(hash);
  const record = entry.value;
  const now = s.options.clock.now();
  if (!record || record.client_id !== client.client_id || Date.parse(record.expires_at) <= now) {
    return fail("invalid_grant", "unknown, expired or foreign authorization code");
  }
  if (record.grant_id) {
    // A second redemption: the code leaked; the tokens issued for it are withdrawn (§4.1.2).
    await s.store.oauth.revokeGrant(
      record.team_id,
      record.grant_id,
      systemActor,
      "mcp_client.revoked_code_reuse",
    );
    return fail("invalid_grant", "the authorization code was already used");
  }
  if (p.redirect_uri !== undefined && p.redirect_uri !== record.redirect_uri) {
    return fail("invalid_grant", "redirect_uri differs from the authorization request's");
  }
  if ((await s256(p.code_verifier)) !== record.code_challenge) {
    return fail("invalid_grant", "code_verifier does not match the code_challenge");
  }
  const requested = canonicalResource(s, p.resource);
  if (requested !== undefined && requested !== record.resource) {
    return fail("invalid_target", `the code was issued for ${record.resource}`);
  }
  if (!(await memberStill(s, record.user_id, record.team_id))) {
    return fail("invalid_grant", "the approving user is no longer a member of the team");
  }
  const refreshToken = `${REFRESH_TOKEN_PREFIX}${randomBase64Url(32)}`;
  const grant: OAuthGrantRecord = {
    id: uuidv7(now),
    team_id: record.team_id,
    user_id: record.user_id,
    client_id: client.client_id,
    client_name: client.client_name,
    resource: record.resource,
    scope: record.scope,
    created_at: iso(now),
    refreshed_at: iso(now),
    expires_at: iso(grantExpiry(now, now)),
    refresh_hash: await sha256Hex(refreshToken),
  };
  const user = await s.store.identity.user(record.user_id);
  const actor: Actor = {
    type: "mcp_client",
    id: grant.id,
    label: `${client.client_name ?? client.client_id} (${user?.email ?? record.user_id})`,
    user_id: record.user_id,
  };
  if (
    !(await s.store.oauth.redeemCode(hash, entry as Deno.KvEntry<OAuthCodeRecord>, grant, actor))
  ) {
    return fail("invalid_grant", "the authorization code was already used");
  }
  return await tokensFor(s, grant, refreshToken);
}

const systemActor: Actor = { type: "system", id: "oauth", label: "authorization server" };

/** The `refresh_token` grant with rotation (RFC 6749 §6, OAuth 2.1 §4.3.1). */
export async function refreshGrant(
  s: OAuthServer,
  p: Record<string, string | undefined>,
): Promise<TokenAnswer | OAuthFailure> {
  if (!p.refresh_token || !p.client_id) {
    return fail("invalid_request", "refresh_token and client_id are required");
  }
  const client = p.client_id.length <= 100 ? await s.store.oauth.client(p.client_id) : null;
  if (!client) return fail("invalid_client", "unknown client_id", 401);
  const hash = await sha256Hex(p.refresh_token);
  const ref = await s.store.oauth.refreshRef(hash);
  if (!ref) return fail("invalid_grant", "unknown, expired or revoked refresh token");
  const entry = await s.store.oauth.grant(ref.team_id, ref.grant_id);
  const grant = entry.value;
  if (!grant || grant.client_id !== client.client_id) {
    return fail("invalid_grant", "unknown, expired or revoked refresh token");
  }
  if (!ref.current || grant.refresh_hash !== hash) {
    // A rotated-out token came back: someone holds a copy. End the grant for both holders.
    await s.store.oauth.revokeGrant(
      grant.team_id,
      grant.id,
      systemActor,
      "mcp_client.revoked_refresh_reuse",
    );
    return fail("invalid_grant", "the refresh token was already used; authorize again");
  }
  const now = s.options.clock.now();
  if (Date.parse(grant.expires_at) <= now) {
    return fail("invalid_grant", "the grant expired; authorize again");
  }
  const requested = canonicalResource(s, p.resource);
  if (requested !== undefined && requested !== grant.resource) {
    return fail("invalid_target", `the grant is for ${grant.resource}`);
  }
  if (!(await memberStill(s, grant.user_id, grant.team_id))) {
    await s.store.oauth.revokeGrant(grant.team_id, grant.id, systemActor, "mcp_client.revoked");
    return fail("invalid_grant", "the approving user is no longer a member of the team");
  }
  const refreshToken = `${REFRESH_TOKEN_PREFIX}${randomBase64Url(32)}`;
  const next: OAuthGrantRecord = {
    ...grant,
    refreshed_at: iso(now),
    expires_at: iso(grantExpiry(Date.parse(grant.created_at), now)),
    refresh_hash: await sha256Hex(refreshToken),
  };
  if (!(await s.store.oauth.rotate(entry as Deno.KvEntry<OAuthGrantRecord>, next))) {
    return fail("invalid_grant", "the refresh token was used concurrently; authorize again");
  }
  await s.store.oauth.touchClient(client, USED_CLIENT_MS);
  return await tokensFor(s, next, refreshToken);
}

/**
 * Token revocation (RFC 7009): a refresh token or an access token of the MCP flow ends its grant.
 * Unknown tokens and other clients' tokens are ignored (the answer is the same 200 either way).
 */
export async function revokeToken(s: OAuthServer, token: string, clientId: string): Promise<void> {
  let grantRef: { team_id: string; grant_id: string } | null = null;
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) {
    grantRef = await s.store.oauth.refreshRef(await sha256Hex(token));
  } else {
    try {
      const claims = await s.jwt.verifyMcpAccessToken(token, mcpResource(s));
      grantRef = { team_id: claims.team_id, grant_id: claims.grant_id };
    } catch {
      return;
    }
  }
  if (!grantRef) return;
  const grant = (await s.store.oauth.grant(grantRef.team_id, grantRef.grant_id)).value;
  if (!grant || grant.client_id !== clientId) return;
  await s.store.oauth.revokeGrant(grant.team_id, grant.id, {
    type: "mcp_client",
    id: grant.id,
    label: grant.client_name ?? grant.client_id,
    user_id: grant.user_id,
  });
}
