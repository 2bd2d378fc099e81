/** The shared incoming store SCP of C-MOVE retrieves: one listener per port, opened and closed by reference. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { freePort } from "../../../tests/support/mod.ts";
import { Logger } from "../../../shared/mod.ts";
import { IncomingStoreScp } from "./store_scp.ts";

const logger = new Logger({ level: "error", format: "json", sink: () => {} });

Deno.test("incoming store SCP: a retrieve that starts while the last listener closes gets the port", async () => {
  const port = freePort();
  for (let round = 0; round < 20; round++) {
    const first = await IncomingStoreScp.acquire(port, "GATEWAY", logger);
    const released = first.release();
    // The next retrieve comes before the close has finished.
    const second = await IncomingStoreScp.acquire(port, "GATEWAY", logger);
    await released;
    assert(second !== first, "a new listener after the last reference went");
    assertEquals(second.port, port);
    await second.release();
  }
});

Deno.test("incoming store SCP: references share one listener; the last release closes it", async () => {
  const port = freePort();
  const a = await IncomingStoreScp.acquire(port, "GATEWAY", logger);
  const b = await IncomingStoreScp.acquire(port, "GATEWAY", logger);
  assert(a === b);
  await a.release();
  const open = await Deno.connect({ hostname: "127.0.0.1", port }).then((c) => (c.close(), true));
  assert(open, "still listening while a reference is held");
  await b.release();
  const refused = await Deno.connect({ hostname: "127.0.0.1", port }).then(
    (c) => (c.close(), false),
    () => true,
  );
  assert(refused, "closed with the last reference");
});
