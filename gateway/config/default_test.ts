import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_CONFIG_TEXT, loadDefaultConfig } from "./default.ts";
import { validateConfigText } from "../../shared/gateway_config/mod.ts";

Deno.test("loadDefaultConfig: echo under /echo on 0.0.0.0:8080, management on 127.0.0.1:9090", async () => {
  const loaded = await loadDefaultConfig();
  assert.deepEqual(loaded.problems, []);
  const c = loaded.config!;
  assert.equal(c.transforms_path, join(Deno.cwd(), "transforms"));
  assert.deepEqual(c.source_files, []);
  assert.deepEqual(c.network, { default: { name: "default", bind: "0.0.0.0", port: 8080 } });
  assert.deepEqual(c.endpoints, {
    echo: { name: "echo", service: "http", options: { path_prefix: "/echo" }, networks: [] },
  });
  assert.equal(c.backends.echo.service, "echo");
  assert.deepEqual(c.pipelines, {
    echo: { name: "echo", endpoints: ["echo"], middleware: [], backends: ["echo"] },
  });
  assert.deepEqual(c.management, {
    enabled: true,
    bind: "127.0.0.1",
    port: 9090,
    prefix: "admin",
    allowed_hosts: [],
    console: true,
  });
});

Deno.test("DEFAULT_CONFIG_TEXT: valid on its own, as the cloud would check it", () => {
  assert.deepEqual(validateConfigText(DEFAULT_CONFIG_TEXT, "<embedded>").problems, []);
});

Deno.test("loadDefaultConfig: other ports for the data listener and the management API", async () => {
  const loaded = await loadDefaultConfig({ port: 18080, managementPort: 19090 });
  assert.deepEqual(loaded.problems, []);
  const c = loaded.config!;
  assert.deepEqual(Object.keys(c.network), ["default"]);
  assert.deepEqual([c.network.default.bind, c.network.default.port], ["0.0.0.0", 18080]);
  assert.equal(c.management.bind, "127.0.0.1");
  assert.equal(c.management.port, 19090);
  assert.deepEqual(Object.keys(c.pipelines), ["echo"]);
});
