import assert from "node:assert/strict";
import { createManagementApp, MAX_BODY_BYTES } from "./mod.ts";
import { fakeControl, memoryLogger } from "./testing.ts";

// The same app behind a real Deno.serve socket, as the runtime serves it.
Deno.test("the app behind Deno.serve: routes, 405, 413 and request ids over HTTP", async () => {
  const { control } = fakeControl();
  const app = createManagementApp(control, memoryLogger().logger);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    const info = await fetch(`${base}/admin/info`, { headers: { "X-Request-Id": "sock-1" } });
    assert.equal(info.status, 200);
    assert.equal(info.headers.get("x-request-id"), "sock-1");
    assert.equal((await info.json()).management.prefix, "admin");

    const wrong = await fetch(`${base}/admin/info`, { method: "POST" });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, HEAD");
    assert.equal((await wrong.json()).error.code, "method_not_allowed");

    const big = await fetch(`${base}/admin/token`, {
      method: "POST",
      body: new Uint8Array(MAX_BODY_BYTES + 1),
    });
    assert.equal(big.status, 413);
    assert.equal((await big.json()).error.code, "payload_too_large");

    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^# TYPE gateway_requests_total counter$/m);
  } finally {
    await server.shutdown();
  }
});
