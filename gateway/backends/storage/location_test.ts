import { assertEquals } from "../../../tests/assert.ts";
import { endpointPrefix, locationOf, locationRule, requestPathFor } from "./location.ts";
import { parseTemplate } from "./template.ts";

const rule = (t: string) => locationRule(parseTemplate(t, "read_pattern"));

Deno.test("location: read_pattern `<text>{path}<text>` is inverted", () => {
  assertEquals(rule("{path}"), { before: "", after: "" });
  assertEquals(rule("archive/{path}.json"), { before: "archive/", after: ".json" });
  assertEquals(requestPathFor("archive/p1/x.json", rule("archive/{path}.json")), "p1/x");
  // A stored path the rule cannot produce falls back to the stored path itself.
  assertEquals(requestPathFor("other/p1/x.bin", rule("archive/{path}.json")), "other/p1/x.bin");
});

Deno.test("location: other read patterns are not invertible", () => {
  assertEquals(rule("{tenant}/{path}"), undefined);
  assertEquals(rule("{id}.json"), undefined);
  assertEquals(locationRule(undefined), undefined);
  assertEquals(requestPathFor("a/b c.json", undefined), "a/b%20c.json");
});

Deno.test("location: the endpoint prefix comes from the original and relative paths", () => {
  assertEquals(endpointPrefix("/files/a/b", "/a/b"), "/files");
  assertEquals(endpointPrefix("/files", "/"), "/files");
  assertEquals(endpointPrefix("/files/", "/"), "/files");
  assertEquals(endpointPrefix("/", "/"), "");
  assertEquals(endpointPrefix("/files/x", "/rewritten"), "");
  assertEquals(
    locationOf("p/2025-01-31T09:15:02Z.json", rule("{path}"), "/files", "/"),
    "/files/p/2025-01-31T09:15:02Z.json",
  );
});
