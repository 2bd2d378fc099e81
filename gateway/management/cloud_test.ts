import assert from "node:assert/strict";
import type { CloudControl, CloudInfo, TokenStored } from "../cloud_client/mod.ts";
import { initialSyncStatus } from "../cloud_client/mod.ts";
import { GatewayError } from "../errors.ts";
import { CLOUD_DISABLED_MESSAGE, createManagementApp } from "./mod.ts";
import { authed, fakeControl, memoryLogger, TEST_GUARD } from "../../tests/support/management.ts";

const OPS = ["authorize", "token", "update"];

const STORED: TokenStored = {
  stored: true,
  gateway_id: "0190f5e1-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
  gateway_code: "edge-1",
  expires_at: "2030-01-01T00:00:00.000Z",
  persisted: true,
};

/** A CloudControl that records its calls and answers what the test sets. */
function recordingCloud() {
  const calls: { op: string; args: unknown[] }[] = [];
  let failure: GatewayError | undefined;
  const answer = <T>(op: string, args: unknown[], value: T): Promise<T> => {
    calls.push({ op, args });
    return failure ? Promise.reject(failure) : Promise.resolve(value);
  };
  const info: CloudInfo = {
    enabled: true,
    url: "https://cloud.example",
    gateway_code: "edge-1",
    gateway_id: STORED.gateway_id,
    authorized: true,
    verified: true,
    token_source: "management_api",
    token_expires_at: STORED.expires_at,
    token_renews_at: null,
    persisted: true,
    encryption_key: true,
    state_dir: "/var/lib/gateway",
    sync: initialSyncStatus(),
  };
  const cloud: CloudControl = {
    storeToken: (body) => answer("storeToken", [body], STORED),
    authorize: (authorization, body) => answer("authorize", [authorization, body], STORED),
    resetPin: () => answer("resetPin", [], { reset: true, previous: null }),
    uploadConfig: () =>
      answer("uploadConfig", [], {
        uploaded_bytes: 12,
        files: ["/etc/gateway/gateway.toml"],
        sha256: "ab",
        uploaded_at: "2030-01-01T00:00:00.000Z",
        problems: [],
      }),
    info: () => info,
  };
  return { cloud, calls, fail: (err: GatewayError) => failure = err };
}

function setup(enabled = false) {
  const { control, state } = fakeControl();
  const recording = recordingCloud();
  (control as { cloud?: CloudControl }).cloud = recording.cloud;
  if (enabled) {
    state.config = { ...state.config, cloud: { enabled: true, url: "https://cloud.example" } };
  }
  const { logger, lines } = memoryLogger();
  const app = createManagementApp(control, logger, TEST_GUARD);
  const send = (path: string, body?: string, headers: Record<string, string> = {}) =>
    app.fetch(
      authed("http://127.0.0.1:9090" + path, {
        method: path === "/admin/info" ? "GET" : "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      }),
    );
  const post = (path: string, body?: unknown, headers?: Record<string, string>) =>
    send(path, body === undefined ? undefined : JSON.stringify(body), headers);
  return { state, lines, post, send, ...recording };
}

Deno.test("cloud operations answer 403 cloud_disabled with the fix while cloud is disabled", async () => {
  const { post, lines, calls } = setup();
  for (const op of OPS) {
    const res = await post(`/admin/${op}`, { machine_token: "tok-secret" });
    assert.equal(res.status, 403, op);
    const body = await res.json();
    assert.equal(body.error.code, "cloud_disabled");
    assert.equal(body.error.message, CLOUD_DISABLED_MESSAGE);
    assert.equal(body.error.request_id, res.headers.get("x-request-id"));
  }
  assert.match(CLOUD_DISABLED_MESSAGE, /\[cloud\] enabled = true/);
  assert.match(CLOUD_DISABLED_MESSAGE, /gwcli gateway:reload/);
  assert.match(CLOUD_DISABLED_MESSAGE, /gwcli gateway:authorize/);
  const refused = lines.filter((l) =>
    l.msg === "cloud operation refused: cloud integration is disabled"
  );
  assert.deepEqual(refused.map((l) => l.operation), OPS);
  assert.deepEqual(calls, [], "nothing reaches the cloud integration");
  assert.ok(!JSON.stringify(lines).includes("tok-secret"));
});

Deno.test("POST /token hands the JSON payload to the integration and answers what it stored", async () => {
  const { post, calls } = setup(true);
  const payload = { machine_token: "a.b.c", expires_at: "2030-01-01T00:00:00Z" };
  const res = await post("/admin/token", payload);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), STORED);
  assert.deepEqual(calls, [{ op: "storeToken", args: [payload] }]);
});

Deno.test("POST /token without a JSON body is 400 invalid_machine_token (the integration is not called)", async () => {
  const { send, calls } = setup(true);
  for (const body of [undefined, "{not json", "  "]) {
    const res = await send("/admin/token", body);
    assert.equal(res.status, 400, String(body));
    const err = (await res.json()).error;
    assert.equal(err.code, "invalid_machine_token");
    assert.match(err.message, /machine_token, expires_at, gateway_id, gateway_code/);
  }
  assert.deepEqual(calls, []);
});

Deno.test("POST /authorize takes the user token from the body (Authorization is the management token)", async () => {
  const { send, post, calls } = setup(true);
  const body = { user_token: "user-jwt", gateway_code: "edge-2" };
  assert.equal((await post("/admin/authorize", body)).status, 200);
  assert.equal((await send("/admin/authorize", undefined)).status, 200);
  assert.deepEqual(calls, [
    { op: "authorize", args: ["Bearer user-jwt", body] },
    { op: "authorize", args: [undefined, undefined] },
  ]);
  const bad = await send("/admin/authorize", "{");
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.code, "bad_request");
});

Deno.test("POST /update answers the upload summary", async () => {
  const { post } = setup(true);
  const res = await post("/admin/update");
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.uploaded_bytes, 12);
  assert.deepEqual(body.files, ["/etc/gateway/gateway.toml"]);
});

Deno.test("errors of the integration keep their status and code, and are logged without secrets", async () => {
  const { post, fail, lines } = setup(true);
  const cases: [string, GatewayError][] = [
    ["token", new GatewayError(401, "machine_token_rejected", "machine token: expired")],
    ["authorize", new GatewayError(502, "cloud_unreachable", "cannot reach the cloud")],
    ["update", new GatewayError(409, "not_authorized", "run gwcli gateway:authorize")],
  ];
  for (const [op, err] of cases) {
    fail(err);
    const res = await post(`/admin/${op}`, {
      machine_token: "tok-secret",
      user_token: "user-secret",
    });
    assert.equal(res.status, err.status, op);
    const body = await res.json();
    assert.deepEqual([body.error.code, body.error.message], [err.code, err.message]);
    assert.equal(body.error.request_id, res.headers.get("x-request-id"));
  }
  const failed = lines.filter((l) => l.msg === "cloud operation failed");
  assert.deepEqual(failed.map((l) => l.code), cases.map(([, e]) => e.code));
  const text = JSON.stringify(lines);
  assert.ok(!text.includes("tok-secret") && !text.includes("user-secret"));
});

Deno.test("enabling the cloud by reload switches the answer from 403 to the operation", async () => {
  const { state, post } = setup();
  assert.equal((await post("/admin/update")).status, 403);
  state.next = { ...state.config, cloud: { enabled: true, url: "https://cloud.example" } };
  assert.equal((await post("/api/reload")).status, 200);
  assert.equal((await post("/admin/update")).status, 200);
});

Deno.test("GET /info carries the integration's cloud object", async () => {
  const { send, cloud } = setup(true);
  const info = await (await send("/admin/info")).json();
  assert.equal(info.cloud_enabled, true);
  assert.deepEqual(info.cloud, cloud.info());
});
