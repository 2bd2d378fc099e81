import assert from "node:assert/strict";
import { freePort } from "./ports.ts";

Deno.test("freePort: returns a port that can be bound right away", () => {
  const port = freePort();
  assert.ok(port > 0 && port < 65536);
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  listener.close();
});
