/** Paths decided as the server reads them, and method overrides (request_path.ts). */
import { assertEquals, assertMatch, assertThrows } from "../../tests/assert.ts";
import { Body, RequestEnvelope } from "../envelope.ts";
import type { GatewayError } from "../errors.ts";
import { decidePath, refuseMethodOverride } from "./request_path.ts";

Deno.test("decidePath: decoded segments, or why a server could read the path two ways", () => {
  assertEquals(decidePath("/Patient/123"), { segments: ["Patient", "123"], path: "/Patient/123" });
  assertEquals(decidePath("/Patient/123/").segments, ["Patient", "123"]);
  assertEquals(decidePath("/").segments, []);
  assertEquals(decidePath("/Observation/%24everything").segments, ["Observation", "$everything"]);
  assertEquals(decidePath("/a%20b/%C3%A9").segments, ["a b", "é"]);
  for (
    const [path, why] of [
      ["/Observation/1%2F..%2FPatient", /encoded \/ or \\/],
      ["/Observation/1%2f..", /encoded/],
      ["/a%5Cb", /encoded/],
      ["/a/%2e%2e/b", /\.\. path segment/],
      ["/a/./b", /\. or \.\. path segment/],
      ["/a//b", /empty path segment/],
      ["/Patient;jsessionid=1/2", /path parameter/],
      ["/a/%00", /control character/],
      ["/a/%E0%A4%A", /malformed percent-encoding/],
    ] as const
  ) {
    assertMatch(decidePath(path).problem ?? "(decided)", why, path);
  }
});

Deno.test("refuseMethodOverride: another method by header or _method is refused", () => {
  const req = (method: string, headers: Record<string, string>, query = "") =>
    new RequestEnvelope({
      id: "r",
      protocol: "http",
      method,
      path: "/x",
      headers: new Headers(headers),
      rawQuery: query,
      body: Body.empty(),
      endpoint: "e",
    });
  refuseMethodOverride(req("GET", {}));
  refuseMethodOverride(req("POST", { "x-http-method-override": "post" })); // the same method
  refuseMethodOverride(req("GET", {}, "?method=x&_methods=1"));
  for (
    const [headers, query] of [
      [{ "x-http-method-override": "DELETE" }, ""],
      [{ "x-http-method": "PUT" }, ""],
      [{ "x-method-override": "PATCH" }, ""],
      [{}, "?_method=DELETE"],
      [{}, "?%5Fmethod=DELETE"],
      [{}, "?_%6Dethod=DELETE"],
    ] as const
  ) {
    const err = assertThrows(() =>
      refuseMethodOverride(req("GET", headers, query))
    ) as GatewayError;
    assertEquals([err.status, err.code], [400, "method_override_refused"]);
  }
});
