import assert from "node:assert/strict";
import { allocationVerdicts, parseFlags, TARGETS } from "./main.ts";

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

Deno.test("allocationVerdicts: the gateway against 12 KB, our client's share over the floor against 8 KB", () => {
  const rows = allocationVerdicts({
    gateway_http: 12_000,
    minimal_proxy: 13_200,
    raw_fields_floor: 10_100,
  });
  assert.deepEqual(rows, [
    ["gateway http pipeline", "12000", `<= ${TARGETS.gatewayBytesPerRequest}`, "PASS"],
    [
      "our HTTP/1.1 client's share (minimal proxy - proxy floor)",
      "3100",
      `<= ${TARGETS.clientShareBytesPerRequest}`,
      "PASS",
    ],
  ]);
  assert.equal(allocationVerdicts({ gateway_http: 13_000 })[0][3], "MISS");
  // No floor measured: no share to judge.
  assert.equal(allocationVerdicts({ minimal_proxy: 13_200 }).length, 0);
});
