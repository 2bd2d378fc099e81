import assert from "node:assert/strict";
import { parseWrk, wrkArgs, wrkDurationMs } from "./wrk.ts";

const REPORT = `Running 10s test @ http://127.0.0.1:8080/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.23ms  456.00us  12.34ms   78.90%
    Req/Sec    25.00k     1.23k   28.00k    70.00%
  Latency Distribution
     50%  812.00us
     75%    1.40ms
     90%    1.60ms
     99%    2.50s 
  500123 requests in 10.00s, 100.00MB read
  Socket errors: connect 0, read 2, write 1, timeout 3
  Non-2xx or 3xx responses: 5
Requests/sec:  50012.34
Transfer/sec:     10.00MB
`;

Deno.test("wrkDurationMs: us, ms, s", () => {
  assert.equal(wrkDurationMs("812.00us"), 0.812);
  assert.equal(wrkDurationMs("1.40ms"), 1.4);
  assert.equal(wrkDurationMs("2.50s"), 2500);
  assert.throws(() => wrkDurationMs("fast"), /not a wrk duration/);
});

Deno.test("parseWrk: throughput, percentiles and errors", () => {
  assert.deepEqual(parseWrk(REPORT), {
    requestsPerSec: 50012.34,
    requests: 500123,
    p50Ms: 0.812,
    p75Ms: 1.4,
    p90Ms: 1.6,
    p99Ms: 2500,
    socketErrors: 6,
    non2xx: 5,
  });
  const clean = parseWrk(
    REPORT.replace(/^\s+Socket errors.*\n/m, "").replace(/^\s+Non-2xx.*\n/m, ""),
  );
  assert.equal(clean.socketErrors + clean.non2xx, 0);
  assert.throws(() => parseWrk("wrk: connection refused"), /no Requests\/sec|no 50% latency/);
});

Deno.test("wrkArgs: threads never exceed connections; script arguments follow --", () => {
  assert.deepEqual(
    wrkArgs({
      url: "http://x/",
      threads: 2,
      connections: 1,
      durationSec: 5,
      script: "r.lua",
      scriptArgs: ["10"],
    }),
    ["-t1", "-c1", "-d5s", "--latency", "--timeout", "10s", "-s", "r.lua", "http://x/", "--", "10"],
  );
});
