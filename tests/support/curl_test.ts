import assert from "node:assert/strict";
import { curl } from "./curl.ts";
import { requirePeer } from "./peers.ts";

Deno.test({
  name: "curl: runs Debian curl and returns its output",
  ignore: !requirePeer("curl tests", "curl", "curl"),
  async fn() {
    await using server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("hello"),
    );
    const result = await curl(["-sS", `http://127.0.0.1:${server.addr.port}/`]);
    assert.deepEqual(result, { code: 0, stdout: "hello", stderr: "" });
    const refused = await curl(["-sS", "http://127.0.0.1:1/"]);
    assert.equal(refused.code, 7);
    assert.match(refused.stderr, /Failed to connect|Couldn't connect/);
  },
});
