/**
 * The cloud service in the test process: a free loopback port, a temp KV file, a manual clock,
 * a low PBKDF2 iteration count (tests only), and helpers to make users, tokens and API calls.
 */
import {
  type CloudOptionsInput,
  type CloudServer,
  createUser,
  ManualClock,
  startCloud,
} from "../cloud/mod.ts";
import {
  approveAuthorization,
  checkAuthorizationRequest,
  createApiToken,
  exchangeCode,
  registerClient,
} from "../cloud/auth/mod.ts";
import { base64Url } from "../cloud/store/mod.ts";
import { decodeTokenClaims } from "../shared/tokens.ts";
import type { ResourceKind, Team, User } from "../cloud/store/mod.ts";
import { CREATE_EXAMPLES, EXAMPLE_IDS, EXAMPLE_ORDER } from "../cloud/api/mod.ts";
import { freePort, removeDir } from "./support/mod.ts";

/** A running test service. */
export interface TestCloud {
  /** Where the test reaches the service (loopback). */
  url: string;
  /** The service's public base URL (the token issuer); equal to `url` unless a test sets one. */
  baseUrl: string;
  server: CloudServer;
  clock: ManualClock;
  dir: string;
  stop(): Promise<void>;
}

/** Starts the service on 127.0.0.1 with a temp data directory. */
export async function startTestCloud(options: CloudOptionsInput = {}): Promise<TestCloud> {
  const dir = await Deno.makeTempDir({ prefix: "cloud-test-" });
  const clock = new ManualClock();
  // The default base URL of a loopback bind says `localhost`; tests reach the service and pin
  // its issuer at the address it is bound to, so they name that address explicitly.
  const port = options.port ?? freePort();
  const server = await startCloud({
    port,
    hostname: "127.0.0.1",
    baseUrl: `http://127.0.0.1:${port}`,
    dataDir: dir,
    passwordIterations: 1000,
    clock,
    keyEncryptionKey: TEST_KEY_ENCRYPTION_KEY,
    ...options,
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    baseUrl: server.url,
    server,
    clock,
    dir,
    stop: async () => {
      // A short grace: an idle keep-alive connection of the test's own fetch would otherwise hold
      // the stop until the listener's sweep closes it (about 2 s).
      await server.stop(STOP_GRACE_MS);
      await removeDir(dir);
    },
  };
}

/** How long a test service's stop waits for requests in flight. */
const STOP_GRACE_MS = 250;

/** The signing-key encryption key of the test services (random per test process). */
export const TEST_KEY_ENCRYPTION_KEY = btoa(
  String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))),
);

/** Runs `fn` with a fresh service and stops it afterwards. */
export async function withCloud(
  fn: (cloud: TestCloud) => Promise<void>,
  options: CloudOptionsInput = {},
): Promise<void> {
  const cloud = await startTestCloud(options);
  try {
    await fn(cloud);
  } finally {
    await cloud.stop();
  }
}

/** A user with their team, a user token and an API token. */
export interface TestUser {
  user: User;
  team: Team;
  password: string;
  userToken: string;
  apiToken: string;
}

/** Creates a user (and team) directly in the store, with a user token and an API token. */
export async function makeUser(
  cloud: TestCloud,
  email: string,
  teamName?: string,
): Promise<TestUser> {
  const s = cloud.server.services;
  const password = `pw-${crypto.randomUUID()}`;
  const { user, team } = await createUser(s, {
    email,
    name: email.split("@")[0],
    password,
    team: teamName,
  });
  const { token: userToken } = await s.jwt.issueUserToken(
    user,
    team,
    s.options.userTokenTtlSeconds,
  );
  const actor = { type: "user" as const, id: user.id, label: user.email, user_id: user.id };
  const { token: apiToken } = await createApiToken(s, {
    userId: user.id,
    teamId: team.id,
    name: "test",
    expiresInDays: null,
  }, actor);
  return { user, team, password, userToken, apiToken };
}

/** The answer of {@link call}. */
export interface CallResult {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  json: any;
  text: string;
}

/** Calls the API with a bearer token; `body` is sent as JSON unless it is a string. */
export async function call(
  cloud: TestCloud,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(`${cloud.url}${path}`, { method, headers, body });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, json, text };
}

/**
 * Creates one record of every kind from the documented examples (docs/cloud-api.md, OpenAPI),
 * replacing the example ids by the ids the service assigns. Fails if an example is refused.
 */
export async function createExamples(
  cloud: TestCloud,
  token: string,
  // deno-lint-ignore no-explicit-any
): Promise<Record<ResourceKind, any>> {
  const ids = new Map<string, string>();
  // deno-lint-ignore no-explicit-any
  const out: Record<string, any> = {};
  for (const kind of EXAMPLE_ORDER) {
    let text = JSON.stringify(CREATE_EXAMPLES[kind]);
    for (const [placeholder, real] of ids) text = text.replaceAll(placeholder, real);
    const res = await call(cloud, "POST", `/api/${kind}`, { token, body: text });
    if (res.status !== 201) throw new Error(`example ${kind} refused: ${res.status} ${res.text}`);
    ids.set(EXAMPLE_IDS[kind], res.json.id);
    out[kind] = res.json;
  }
  return out as Record<ResourceKind, unknown>;
}

/** A signed-in web session of `user`, made in the store: its cookie header and CSRF token. */
export async function uiSession(
  cloud: TestCloud,
  user: User,
): Promise<{ cookie: string; csrf: string }> {
  const { id, session } = await cloud.server.services.store.sessions.create(user.id, 3600);
  return { cookie: `gw_session=${id}`, csrf: session.csrf };
}

/**
 * Registers an MCP client and runs its authorization (approved by `user` in `team`) through the
 * flow's own functions; returns the grant's id (the MCP OAuth test drives the same over HTTP).
 */
export async function approveMcpClient(cloud: TestCloud, user: User, team: Team): Promise<string> {
  const s = cloud.server.services;
  const redirectUri = "http://127.0.0.1:1/callback";
  const registered = await registerClient(s, {
    client_name: "test client",
    redirect_uris: [redirectUri],
  });
  if (!registered.ok) throw new Error(registered.description);
  const clientId = registered.client.client_id;
  const verifier = "v".repeat(43);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const check = await checkAuthorizationRequest(s, {
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: base64Url(new Uint8Array(digest)),
    code_challenge_method: "S256",
  });
  if (!check.ok) throw new Error(JSON.stringify(check));
  const back = new URL(await approveAuthorization(s, check.request, user, team));
  const tokens = await exchangeCode(s, {
    code: back.searchParams.get("code")!,
    client_id: clientId,
    redirect_uri: redirectUri,
    code_verifier: verifier,
  });
  if (!tokens.ok) throw new Error(tokens.description);
  const claims = decodeTokenClaims(tokens.access_token) as { grant_id?: string } | undefined;
  return String(claims?.grant_id);
}

/** The answer of a web UI request: status, redirect target and page text. */
export interface UiAnswer {
  status: number;
  location: string | null;
  text: string;
}

/**
 * A web UI request as a signed-in browser makes it: the session cookie, and for a form its CSRF
 * token and this origin. `form` entries with array values are sent as repeated fields.
 */
export async function uiRequest(
  cloud: TestCloud,
  session: { cookie: string; csrf: string },
  path: string,
  form?: Record<string, string | string[]>,
): Promise<UiAnswer> {
  let body: URLSearchParams | undefined;
  if (form) {
    body = new URLSearchParams({ _csrf: session.csrf });
    for (const [k, v] of Object.entries(form)) {
      for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    }
  }
  const res = await fetch(`${cloud.url}${path}`, {
    method: form ? "POST" : "GET",
    redirect: "manual",
    headers: {
      cookie: session.cookie,
      ...(form ? { "content-type": "application/x-www-form-urlencoded", origin: cloud.url } : {}),
    },
    body,
  });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}
