/** rate_limit: a burst, then the refill rate; keys apart; Retry-After; bounded buckets. */
import { assertEquals, assertThrows } from "../../tests/assert.ts";
import { Body, RequestEnvelope } from "../envelope.ts";
import type { GatewayError } from "../errors.ts";
import { RateLimitMiddleware } from "./rate_limit.ts";

function request(tenant?: string, remoteAddr = "10.0.0.1"): RequestEnvelope {
  return new RequestEnvelope({
    id: "t",
    protocol: "http",
    method: "GET",
    path: "/",
    endpoint: "api",
    remoteAddr,
    headers: new Headers(tenant ? { "x-tenant": tenant } : {}),
    body: Body.empty(),
  });
}

Deno.test("rate_limit: burst, refill, keys, Retry-After and the key bound", () => {
  let now = 0;
  const limit = new RateLimitMiddleware(
    "r",
    { requests_per_second: 2, burst: 3, key: "header:x-tenant", max_keys: 2 },
    () => now,
  );
  const passes = (tenant?: string) => {
    try {
      limit.onRequest(request(tenant));
      return true;
    } catch {
      return false;
    }
  };
  assertEquals([passes("a"), passes("a"), passes("a"), passes("a")], [true, true, true, false]);
  const err = assertThrows(() => limit.onRequest(request("a"))) as GatewayError;
  assertEquals([err.status, err.code, err.headers], [429, "rate_limited", { "retry-after": "1" }]);
  assertEquals(passes("b"), true); // another key, its own bucket
  now += 500; // one token back at 2 per second
  assertEquals([passes("a"), passes("a")], [true, false]);
  // Requests without the header share one bucket.
  assertEquals([passes(), passes(), passes(), passes()], [true, true, true, false]);
  // Three keys over a bound of two: the least recently used ("b") starts again full.
  assertEquals([passes("b"), passes("b"), passes("b")], [true, true, true]);

  const byAddress = new RateLimitMiddleware("ip", {
    requests_per_second: 1,
    key: "client_ip",
    max_keys: 10,
  }, () => now);
  byAddress.onRequest(request(undefined, "10.0.0.7"));
  assertThrows(() => byAddress.onRequest(request(undefined, "10.0.0.7")));
  byAddress.onRequest(request(undefined, "10.0.0.8"));
});
