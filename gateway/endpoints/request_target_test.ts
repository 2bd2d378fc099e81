import { assertEquals } from "../../tests/assert.ts";
import { requestTarget } from "./types.ts";

Deno.test("requestTarget splits a server URL as URL does", () => {
  for (
    const url of [
      "http://127.0.0.1:8080/",
      "http://127.0.0.1:8080/api/x",
      "http://example.org/api/x?a=1&b=%20c",
      "https://[::1]:8443/fhir/Patient?_format=json&name:exact=A,B",
      "http://h/a%2Fb/?",
      "http://h/p?q=1#frag",
      "http://h/p#frag",
      "http://h",
    ]
  ) {
    const parsed = new URL(url);
    assertEquals(requestTarget(url), {
      host: parsed.host,
      pathname: parsed.pathname,
      search: parsed.search,
    }, url);
  }
});
