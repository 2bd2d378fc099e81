import assert from "node:assert/strict";
import { CLOUD_DISABLED_MESSAGE, createManagementApp } from "./mod.ts";
import { fakeControl, memoryLogger } from "./testing.ts";

const OPS = ["authorize", "token", "update"];

function setup() {
  const { control, state } = fakeControl();
  const { logger, lines } = memoryLogger();
  const app = createManagementApp(control, logger);
  const post = (path: string, body?: unknown) =>
    app.fetch(
      new Request("http://127.0.0.1:9090" + path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  return { state, lines, post };
}

Deno.test("cloud operations answer 403 cloud_disabled with the fix while cloud is disabled", async () => {
  const { post, lines } = setup();
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
  assert.ok(!JSON.stringify(lines).includes("tok-secret"));
});

Deno.test("cloud enabled: the flows answer 501 not_implemented, never a fake success", async () => {
  const { state, post } = setup();
  state.config = { ...state.config, cloud: { enabled: true, url: "https://cloud.example" } };
  for (const op of OPS) {
    const res = await post(`/admin/${op}`, {});
    assert.equal(res.status, 501, op);
    const body = await res.json();
    assert.equal(body.error.code, "not_implemented");
    assert.match(body.error.message, /cloud flow ships with the cloud issue/);
  }
});

Deno.test("enabling the cloud by reload switches the answer from 403 to 501", async () => {
  const { state, post } = setup();
  assert.equal((await post("/admin/token")).status, 403);
  state.next = { ...state.config, cloud: { enabled: true } };
  assert.equal((await post("/api/reload")).status, 200);
  assert.equal((await post("/admin/token")).status, 501);
});
