import assert from "node:assert/strict";
import { GatewayError } from "../errors.ts";
import { BodyLease, defaultBudget, MemoryBudget } from "./budget.ts";
import { heapFigures } from "./heap.ts";

/** The error `fn` throws. */
function thrown(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("nothing thrown");
}

Deno.test("budget: leases take what fits, the excess is a 503 memory_pressure with Retry-After", () => {
  const budget = new MemoryBudget(1000);
  const a = new BodyLease(budget);
  const b = new BodyLease(budget);
  a.take(600);
  b.take(400);
  assert.equal(budget.used, 1000);
  const err = thrown(() => new BodyLease(budget).take(1));
  assert.ok(err instanceof GatewayError);
  assert.equal(err.status, 503);
  assert.equal(err.code, "memory_pressure");
  assert.deepEqual(err.headers, { "retry-after": "1" });
  // A lease that takes more in steps is refused at the step that does not fit, keeping the rest.
  assert.throws(() => b.take(1), /1000 bytes per isolate/);
  assert.equal(b.held, 400);
  a.release();
  a.release();
  assert.equal(budget.used, 400);
  b.take(600);
  assert.equal(budget.used, 1000);
  b.release();
  assert.equal(budget.used, 0);
});

Deno.test("budget: a body larger than the whole budget passes alone, never beside another", () => {
  const budget = new MemoryBudget(1000);
  const alone = new BodyLease(budget);
  alone.take(5000);
  assert.throws(() => new BodyLease(budget).take(10), /memory_pressure|budget allows/);
  alone.release();
  const small = new BodyLease(budget);
  small.take(10);
  assert.throws(() => new BodyLease(budget).take(5000));
});

Deno.test("budget: the default is 1/8 of this isolate's heap limit; configure sets and resets it", () => {
  const { limit, used } = heapFigures();
  assert.ok(used > 0 && used < limit);
  assert.equal(defaultBudget(), Math.floor(limit / 8));
  const budget = new MemoryBudget();
  assert.equal(budget.limit, Math.floor(limit / 8));
  budget.configure(4096);
  assert.equal(budget.limit, 4096);
  budget.configure(undefined);
  assert.equal(budget.limit, Math.floor(limit / 8));
});

Deno.test("budget: an answer is counted past the budget, never refused", () => {
  const budget = new MemoryBudget(1000);
  const request = new BodyLease(budget);
  request.take(900);
  request.take(500, false); // its backend's answer
  assert.equal(budget.used, 1400);
  // Counted: the next request that would not fit is refused.
  assert.ok(thrown(() => new BodyLease(budget).take(10)) instanceof GatewayError);
  request.release();
  assert.equal(budget.used, 0);
});
