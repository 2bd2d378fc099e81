import assert from "node:assert/strict";
import { managementAddress, startGateway } from "./gateway.ts";
import { freePort } from "./ports.ts";

const FAKE = "tests/support/testdata/fake_gateway.ts";

Deno.test("managementAddress: defaults, wildcard bind and prefix", () => {
  assert.deepEqual(managementAddress(""), { url: "http://127.0.0.1:9090", prefix: "admin" });
  assert.deepEqual(
    managementAddress('[management]\nbind = "0.0.0.0"\nport = 9191\nprefix = "/ops/"\n'),
    { url: "http://127.0.0.1:9191", prefix: "ops" },
  );
  assert.deepEqual(
    managementAddress('[management]\nbind = "::1"\nport = 1\n').url,
    "http://[::1]:1",
  );
});

Deno.test("startGateway: waits for /readyz, stop() ends the process and removes the dir", async () => {
  const port = freePort();
  const gateway = await startGateway({
    configText: `[management]\nbind = "127.0.0.1"\nport = ${port}\n`,
    entry: FAKE,
  });
  assert.deepEqual(gateway.mgmtUrl, `http://127.0.0.1:${port}`);
  assert.deepEqual(gateway.dataUrl(1234), "http://127.0.0.1:1234");
  const response = await fetch(`${gateway.mgmtUrl}/readyz`);
  assert.deepEqual(await response.text(), "ready");
  const status = await gateway.stop();
  assert.deepEqual(status.code, 0);
  await assert.rejects(Deno.stat(gateway.dir), Deno.errors.NotFound);
});

Deno.test("startGateway: an early exit rejects with the process's stderr", async () => {
  await assert.rejects(
    startGateway({
      configText: `[management]\nport = ${freePort()}\n`,
      entry: FAKE,
      env: { FAKE_GATEWAY_MODE: "exit" },
    }),
    { message: /exited with code 3[^]*config rejected on purpose/ },
  );
});

Deno.test("startGateway: a gateway that never gets ready times out and is stopped", async () => {
  await assert.rejects(
    startGateway({
      configText: `[management]\nport = ${freePort()}\n`,
      entry: FAKE,
      env: { FAKE_GATEWAY_MODE: "never" },
      readyTimeoutMs: 1_500,
    }),
    { message: /timed out/ },
  );
});

Deno.test("startGateway: the real gateway/main.ts serves an echo pipeline", async () => {
  const dataPort = freePort();
  await using gateway = await startGateway({
    configText: `[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${freePort()}
prefix = "admin"

[logging]
level = "warn"

[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"

[backends.e]
service = "echo"

[pipelines.p]
endpoints = ["echo"]
backends = ["e"]
`,
  });
  const response = await fetch(`${gateway.dataUrl(dataPort)}/echo/hello`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"name":"Doe"}',
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.match(text, /Doe/);
  assert.ok(response.headers.get("x-request-id"));
  const status = await gateway.stop();
  assert.equal(status.success, true, gateway.output());
});
