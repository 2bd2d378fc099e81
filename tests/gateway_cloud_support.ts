/**
 * A gateway with the cloud integration enabled, running in the test process against our cloud
 * service (tests/cloud_harness.ts): it shares the cloud's manual clock, takes its environment
 * (`GATEWAY_MACHINE_TOKEN`, `GATEWAY_ENCRYPTION_KEY`, `GATEWAY_JWT_SECRET`) from the test instead
 * of the process, and renews or reports on short timers.
 */
import type { ManualClock } from "../shared/clock.ts";
import { Logger } from "../shared/log.ts";
import { createMetrics } from "../gateway/observability/metrics.ts";
import { Gateway } from "../gateway/runtime/mod.ts";
import { call, type TestCloud, type TestUser } from "./cloud_harness.ts";
import {
  freePort,
  runCommand,
  testManagementToken,
  waitFor,
  withManagementToken,
} from "./support/mod.ts";

/** An echo pipeline under `/echo` (local config). */
export const LOCAL_ECHO = `
[endpoints.local_echo]
service = "http"
[endpoints.local_echo.options]
path_prefix = "/local"

[backends.local_echo]
service = "echo"

[pipelines.local_echo]
endpoints = ["local_echo"]
backends = ["local_echo"]
`;

/** How often a test gateway's renewal check looks at the clock, at most (manual time). */
export const RENEWAL_CHECK_MS = 50;

/** The long poll's wait of the test gateways (`?wait=` of their configuration pulls), s. */
export const POLL_WAIT_SECS = 2;

/**
 * Moves the cloud's manual clock once the gateway's renewal check sleeps on it, so that the
 * advance wakes the check; with `looked`, returns once the check has looked and sleeps again
 * (it found the token not due). Otherwise what follows waits for the outcome (a renewal, a
 * rejection) with {@link waitForCloud}.
 */
export async function advanceRenewal(
  clock: ManualClock,
  ms: number,
  options: { looked?: boolean } = {},
): Promise<void> {
  const renewalCheck = (t: number) => t <= RENEWAL_CHECK_MS;
  await clock.waitForTimer(renewalCheck);
  await clock.advance(ms);
  if (options.looked) await clock.waitForTimer(renewalCheck);
}

/** A cloud-enabled gateway in this process. */
export interface CloudGateway {
  gateway: Gateway;
  dir: string;
  configFile: string;
  stateDir: string;
  url: string;
  mgmt: string;
  /** The management API's bearer token. */
  mgmtToken: string;
  logs: string[];
  /** POST/GET a management route; answers status and JSON. */
  admin(
    method: string,
    path: string,
    /** `userToken` goes into the JSON body as `user_token` (POST /admin/authorize). */
    opts?: { body?: unknown; headers?: Record<string, string>; userToken?: string },
    // deno-lint-ignore no-explicit-any
  ): Promise<{ status: number; json: any }>;
  // deno-lint-ignore no-explicit-any
  info(): Promise<any>;
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

/** Options of {@link startCloudGateway}. */
export interface CloudGatewayOptions {
  env?: Record<string, string>;
  /** Extra TOML (pipelines, `[cloud]` keys are added by the helper). */
  body?: string;
  /** Extra keys of the `[cloud]` table. */
  cloudKeys?: string;
  /** Reuse a directory (restart tests). */
  dir?: string;
  /** Cloud enabled (default true). */
  enabled?: boolean;
  /** Seconds between status reports (default 1). */
  statusIntervalSecs?: number;
  /** `[cloud] url` (default: the test cloud's URL). */
  cloudUrl?: string;
  /**
   * Data-plane isolates (default: the body's `[runtime] workers`, else one, the main thread: as
   * `startTestGateway`, a test of behaviour across isolates asks for them).
   */
  workers?: number;
}

/** Starts a gateway whose `[cloud]` points at `cloud`. */
export async function startCloudGateway(
  cloud: TestCloud,
  opts: CloudGatewayOptions = {},
): Promise<CloudGateway> {
  const dir = opts.dir ?? await Deno.makeTempDir({ prefix: "gw-cloud-" });
  const dataPort = freePort();
  const mgmtPort = freePort();
  const stateDir = `${dir}/state`;
  const configFile = `${dir}/gateway.toml`;
  const text = `transforms_path = "transforms"\n${opts.body ?? LOCAL_ECHO}
[cloud]
enabled = ${opts.enabled ?? true}
url = "${opts.cloudUrl ?? cloud.url}"
state_dir = "state"
status_interval_secs = ${opts.statusIntervalSecs ?? 1}
${opts.cloudKeys ?? ""}

[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}

[logging]
level = "debug"
`;
  await Deno.mkdir(`${dir}/transforms`, { recursive: true });
  await Deno.writeTextFile(configFile, text);
  const logs: string[] = [];
  const logger = new Logger({ level: "debug", format: "json", sink: (l) => logs.push(l) });
  const env = opts.env ?? {};
  const mgmtToken = testManagementToken();
  const gateway = new Gateway({
    configFile,
    logger,
    metrics: createMetrics(),
    // Short: a stop otherwise waits for the sweep to close the test's idle keep-alive connection.
    drainSeconds: 0.05,
    workers: opts.workers ?? (/^\s*workers\s*=/m.test(opts.body ?? "") ? undefined : 1),
    env: (name) => name === "GATEWAY_MANAGEMENT_TOKEN" ? mgmtToken : env[name],
    cloud: {
      env: (name) => env[name],
      clock: cloud.clock,
      pollWaitSecs: POLL_WAIT_SECS,
      renewalCheckMs: RENEWAL_CHECK_MS,
    },
  });
  try {
    await gateway.start();
  } catch (err) {
    if (!opts.dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
  const mgmt = `http://127.0.0.1:${mgmtPort}`;
  const admin: CloudGateway["admin"] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    let body: string | undefined;
    const json = o.userToken === undefined
      ? o.body
      : { ...(o.body as Record<string, unknown> | undefined), user_token: o.userToken };
    if (json !== undefined) body = typeof json === "string" ? json : JSON.stringify(json);
    const res = await fetch(
      `${mgmt}${path}`,
      withManagementToken({ method, headers, body }, mgmtToken),
    );
    const t = await res.text();
    return { status: res.status, json: t ? JSON.parse(t) : undefined };
  };
  return {
    gateway,
    dir,
    configFile,
    stateDir,
    url: `http://127.0.0.1:${dataPort}`,
    mgmt,
    mgmtToken,
    logs,
    admin,
    info: async () => (await admin("GET", "/admin/info")).json,
    async stop(o = {}) {
      await gateway.shutdown();
      if (!o.keepDir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Authorizes gateway `code` with the user's API token: the SPEC machine-token payload. */
// deno-lint-ignore no-explicit-any
export async function machineToken(cloud: TestCloud, u: TestUser, code: string): Promise<any> {
  const res = await call(cloud, "POST", "/api/gateway/authorize", {
    token: u.apiToken,
    body: { gateway_code: code },
  });
  if (res.status !== 200 && res.status !== 201) throw new Error(`authorize: ${res.text}`);
  return res.json;
}

/** A fresh age X25519 identity from the Debian `age-keygen` tool: the key file and its text. */
export async function ageKey(dir: string): Promise<{ file: string; identity: string }> {
  const file = `${dir}/age-key.txt`;
  const made = await runCommand("age-keygen", ["-o", file]);
  if (made.code !== 0) throw new Error(`age-keygen failed: ${made.stderr}`);
  const identity = (await Deno.readTextFile(file)).split("\n").find((l) =>
    l.startsWith("AGE-SECRET-KEY-1")
  )!;
  return { file, identity };
}

/** Base64 of a text (how GATEWAY_ENCRYPTION_KEY is usually passed). */
export function base64(text: string): string {
  return btoa(text);
}

/** Waits until the gateway's `info().cloud` satisfies `ok`. */
export async function waitForCloud(
  gw: CloudGateway,
  // deno-lint-ignore no-explicit-any
  ok: (cloud: any) => boolean,
  what: string,
  timeoutMs = 10_000,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  // deno-lint-ignore no-explicit-any
  let last: any;
  await waitFor(async () => {
    last = (await gw.info()).cloud;
    return ok(last);
  }, { timeoutMs, intervalMs: 50, description: `${what} (last: ${JSON.stringify(last)})` });
  return last;
}

/**
 * Waits for the gateway's next answered configuration pull (`last_pull_at` set) when nothing has
 * changed: the cloud holds that long poll on its clock for the poll's wait (`pollWaitSecs`, 2 s),
 * so the clock is moved on until the 304 has come.
 */
// deno-lint-ignore no-explicit-any
export async function waitForPull(cloud: TestCloud, gw: CloudGateway): Promise<any> {
  // deno-lint-ignore no-explicit-any
  let last: any;
  await waitFor(async () => {
    last = (await gw.info()).cloud;
    if (last.sync.last_pull_at !== null) return true;
    await cloud.clock.advance(POLL_WAIT_SECS * 1000);
    return false;
  }, { timeoutMs: 10_000, intervalMs: 50, description: `a pull (last: ${JSON.stringify(last)})` });
  return last;
}

/** The records of an echo pipeline placed on a gateway in the cloud. */
export interface CloudPipeline {
  pipelineId: string;
  endpointId: string;
  transformId?: string;
  middlewareId?: string;
}

/**
 * Creates, in the cloud, an echo pipeline `name` under `prefix` on gateway `gatewayId`, with a
 * transform middleware when `spec` is given.
 */
export async function cloudEchoPipeline(
  cloud: TestCloud,
  u: TestUser,
  gatewayId: string,
  opts: { name: string; prefix: string; spec?: unknown },
): Promise<CloudPipeline> {
  const token = u.apiToken;
  const must = async (path: string, body: unknown) => {
    const res = await call(cloud, "POST", path, { token, body });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.json;
  };
  const n = opts.name;
  const service = await must("/api/services", {
    name: `${n}_svc`,
    endpoint_types: ["http"],
    backend_types: ["echo"],
  });
  const endpoint = await must("/api/endpoints", {
    name: `${n}_in`,
    service_id: service.id,
    type: "http",
    options: { path_prefix: opts.prefix },
  });
  const backend = await must("/api/backends", {
    name: `${n}_out`,
    service_id: service.id,
    type: "echo",
  });
  let transform, middleware;
  if (opts.spec !== undefined) {
    transform = await must("/api/transforms", { name: `${n}_spec`, spec: opts.spec });
    middleware = await must("/api/middleware", {
      name: `${n}_mw`,
      type: "transform",
      transform_id: transform.id,
      options: { apply: "left", fail_on_error: true },
    });
  }
  const pipeline = await must("/api/pipelines", {
    name: n,
    gateway_id: gatewayId,
    endpoint_ids: [endpoint.id],
    middleware_ids: middleware ? [middleware.id] : [],
    backend_ids: [backend.id],
  });
  return {
    pipelineId: pipeline.id,
    endpointId: endpoint.id,
    transformId: transform?.id,
    middlewareId: middleware?.id,
  };
}

/** POSTs JSON to the gateway's data plane; answers status and the echoed `data`. */
export async function postJson(
  url: string,
  body: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; data: any; pipeline?: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  return { status: res.status, data: json.data, pipeline: json.pipeline };
}
