import assert from "node:assert/strict";
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import { TargetPool } from "./targets.ts";

/** A pool of `names`, three failures to take a target out for 10 s. */
function pool(names: string[], extra: Partial<BackendConfig> = {}): TargetPool {
  return new TargetPool(
    "up",
    names.map((name) => ({ name, url: `http://${name}.test` })),
    {
      name: "up",
      service: "http",
      options: {},
      targets: names,
      required: false,
      timeout_secs: 30,
      retries: 0,
      load_balancing: "round_robin",
      max_failures: 3,
      cooldown_secs: 10,
      ...extra,
    },
  );
}

Deno.test("passive health: the only target is never taken out; eject_last_target does", () => {
  const single = pool(["only"]);
  const target = single.targets[0];
  for (let i = 0; i < 5; i++) single.failure(target);
  assert.equal(target.healthy(), true);
  assert.equal(single.pick(), target);

  const strict = pool(["only"], { eject_last_target: true });
  for (let i = 0; i < 3; i++) strict.failure(strict.targets[0]);
  assert.equal(strict.targets[0].healthy(), false);
  assert.throws(() => strict.pick(), /no healthy target/);
});

Deno.test("passive health: with several targets a failing one goes out, the last one in rotation stays", () => {
  const p = pool(["a", "b"]);
  const [a, b] = p.targets;
  for (let i = 0; i < 3; i++) p.failure(a);
  assert.equal(a.healthy(), false);
  for (let i = 0; i < 2; i++) assert.equal(p.pick(), b);
  for (let i = 0; i < 3; i++) p.failure(b);
  assert.equal(b.healthy(), true, "b is the last in rotation");
  assert.equal(p.pick(), b);
  // A success resets the count; a target that comes back counts as in rotation again.
  p.success(b);
  assert.equal(b.consecutiveFailures, 0);
  a.downUntil = 0;
  for (let i = 0; i < 3; i++) p.failure(b);
  assert.equal(b.healthy(), false, "a is back: b may go out");
  assert.equal(p.pick(), a);
});
