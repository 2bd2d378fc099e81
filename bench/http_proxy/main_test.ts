import assert from "node:assert/strict";
import { parseFlags } from "./main.ts";

Deno.test("parseFlags: defaults, overrides, help and invalid values", () => {
  assert.deepEqual(parseFlags([]), {
    durationSec: 10,
    connections: 64,
    threads: 2,
    warmupSec: 3,
    rateFraction: 0.5,
    bodyBytes: 1024,
    rounds: 3,
    allocationRequests: 50_000,
    allocationOnly: false,
    programs: undefined,
    json: undefined,
  });
  const flags = parseFlags(["--duration", "3", "--connections", "16", "--warmup", "0"]);
  assert.ok(flags !== "help");
  assert.equal(flags.durationSec, 3);
  assert.equal(flags.connections, 16);
  assert.equal(flags.warmupSec, 0);
  assert.equal(parseFlags(["-h"]), "help");
  const only = parseFlags(["--allocation-only", "--allocation", "20000"]);
  assert.ok(only !== "help" && only.allocationOnly && only.allocationRequests === 20_000);
  assert.throws(() => parseFlags(["--connections", "0"]), /positive integer/);
  assert.throws(() => parseFlags(["--nope"]), /nope/);
});
