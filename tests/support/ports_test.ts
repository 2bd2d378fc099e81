import assert from "node:assert/strict";
import { freePort } from "./ports.ts";

Deno.test("freePort: returns a port that can be bound right away", () => {
  const port = freePort();
  assert.ok(port > 0 && port < 65536);
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  listener.close();
});

Deno.test("freePort: ports come from below the ephemeral range and skip ports in use", () => {
  const seen = new Set<number>();
  const held: Deno.Listener[] = [];
  try {
    for (let i = 0; i < 50; i++) {
      const port = freePort();
      assert.ok(port >= 20000 && port < 32768, `port ${port}`);
      assert.ok(!seen.has(port), `port ${port} handed out twice`);
      seen.add(port);
      // Held ports are in use: later picks must step over them.
      held.push(Deno.listen({ hostname: "127.0.0.1", port }));
    }
  } finally {
    for (const l of held) l.close();
  }
});

Deno.test("freePort: each port handed out is claimed for this process, so parallel test files never share one", () => {
  const port = freePort();
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/gateway-test-ports`;
  assert.equal(Deno.readTextFileSync(`${dir}/${port}`), String(Deno.pid));
});
