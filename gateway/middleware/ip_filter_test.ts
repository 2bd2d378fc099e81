/**
 * ip_filter: deny wins over allow, an empty allow list passes what is not denied, and
 * X-Forwarded-For is read only from trusted peers, from the right, skipping trusted hops.
 */
import { assertEquals, assertThrows } from "../../tests/assert.ts";
import { Body, RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import { IpFilterMiddleware } from "./ip_filter.ts";

function request(remoteAddr: string, forwarded?: string): RequestEnvelope {
  return new RequestEnvelope({
    id: "t",
    protocol: "http",
    method: "GET",
    path: "/",
    endpoint: "api",
    remoteAddr,
    headers: new Headers(forwarded ? { "x-forwarded-for": forwarded } : {}),
    body: Body.empty(),
  });
}

Deno.test("ip_filter: allow, deny and the forwarded chain of trusted proxies", () => {
  const f = new IpFilterMiddleware("f", {
    allow: ["10.0.0.0/8", "203.0.113.0/24"],
    deny: ["10.66.0.0/16"],
    trusted_proxies: ["10.0.0.5", "10.0.0.6"],
  });
  const pass = (req: RequestEnvelope) => {
    f.onRequest(req);
    return req.metadata["client.ip"];
  };
  const refused = (req: RequestEnvelope) => {
    const err = assertThrows(() => f.onRequest(req)) as GatewayError;
    assertEquals([err instanceof GatewayError, err.status, err.code], [true, 403, "ip_denied"]);
  };
  assertEquals(pass(request("10.1.2.3")), "10.1.2.3");
  refused(request("10.66.1.1"));
  refused(request("192.0.2.1"));
  // An untrusted peer's header is ignored: it cannot claim an allowed address.
  refused(request("192.0.2.1", "10.1.2.3"));
  assertEquals(pass(request("10.9.9.9", "192.0.2.1")), "10.9.9.9");
  // Behind trusted proxies: the first untrusted hop from the right.
  assertEquals(pass(request("10.0.0.5", "203.0.113.9")), "203.0.113.9");
  assertEquals(pass(request("10.0.0.5", "192.0.2.1, 203.0.113.9, 10.0.0.6")), "203.0.113.9");
  refused(request("10.0.0.5", "203.0.113.9, 10.66.0.1"));
  // A forged left part does not matter; a non-address ends the chain at the hop before it.
  assertEquals(pass(request("10.0.0.5", "10.1.1.1, 203.0.113.9")), "203.0.113.9");
  assertEquals(pass(request("10.0.0.5", "junk")), "10.0.0.5");
});
