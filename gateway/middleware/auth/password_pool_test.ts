/**
 * PasswordPool: checks run in workers (the event loop keeps ticking during a cost-12 bcrypt check),
 * at most `size` run and `maxWaiting` wait, the rest are refused at once with 503 and Retry-After;
 * the isolate's pool lives while a lease on it does.
 */
import bcrypt from "bcryptjs";
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { loopTurnsDuring } from "../../../tests/support/mod.ts";
import { GatewayError } from "../../errors.ts";
import { leasePasswordPool, PasswordPool } from "./password_pool.ts";

Deno.test("password pool: bounded running and waiting checks, the rest 503 at once", async () => {
  const hash = bcrypt.hashSync("right", 4);
  const pool = new PasswordPool(2, 5);
  try {
    const outcomes = await Promise.all(
      Array.from(
        { length: 2 + 5 + 3 },
        (_, i) => pool.verify(`wrong-${i}`, hash).then((ok) => ok, (e) => e),
      ),
    );
    const refused = outcomes.filter((o) => o instanceof GatewayError) as GatewayError[];
    assertEquals(refused.length, 3);
    assertEquals([refused[0].status, refused[0].code, refused[0].headers], [
      503,
      "authentication_busy",
      { "retry-after": "1" },
    ]);
    assertEquals(outcomes.filter((o) => o === false).length, 7);
    assertEquals(await pool.verify("right", hash), true);
    assertEquals(pool.threads, 2);
  } finally {
    pool.close();
  }
  await assertRejects(() => pool.verify("right", hash), /closed/);
});

Deno.test("password pool: a cost-12 check does not hold the event loop", async () => {
  const hash = bcrypt.hashSync("right", 12); // about 210 ms of CPU
  const pool = new PasswordPool(1, 4);
  try {
    await pool.verify("warm-up", bcrypt.hashSync("x", 4)); // the worker's start is not the point
    const { value: ok, turns } = await loopTurnsDuring(() =>
      Promise.all([pool.verify("wrong", hash), pool.verify("right", hash)])
    );
    assertEquals(ok, [false, true]);
    // Two checks on this thread would let at most one turn through; in the worker, the loop kept
    // turning while they ran (hundreds of turns on a quiet machine, dozens on a loaded one).
    assert(turns >= 10, `the event loop turned only ${turns} times during two cost-12 checks`);
  } finally {
    pool.close();
  }
});

Deno.test("password pool: shared by leases, ended with the last one", async () => {
  const hash = bcrypt.hashSync("right", 4);
  const a = leasePasswordPool();
  const b = leasePasswordPool();
  assertEquals(await a.verify("right", hash), true);
  a.release();
  a.release(); // twice is once
  assertEquals(await b.verify("right", hash), true, "b's lease still holds the pool");
  b.release();
  await assertRejects(() => b.verify("right", hash), /closed/);
  const c = leasePasswordPool(); // a new pool for a new holder
  try {
    assertEquals(await c.verify("wrong", hash), false);
  } finally {
    c.release();
  }
});
