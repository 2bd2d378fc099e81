import assert from "node:assert/strict";
import { allowedMethods, normalizePrefix, pathOf, PREFIXED, routingPath } from "./routing.ts";

Deno.test("normalizePrefix trims slashes", () => {
  assert.equal(normalizePrefix("admin"), "admin");
  assert.equal(normalizePrefix("/admin/"), "admin");
  assert.equal(normalizePrefix("//a/b//"), "a/b");
  assert.equal(normalizePrefix("/"), "");
});

Deno.test("routingPath maps the prefix onto the internal mount", () => {
  assert.equal(routingPath("/admin/info", "admin"), `${PREFIXED}/info`);
  assert.equal(routingPath("/a/b/info", "a/b"), `${PREFIXED}/info`);
  assert.equal(routingPath("/adminx/info", "admin"), "/adminx/info");
  assert.equal(routingPath("/admin", "admin"), "/admin");
  assert.equal(routingPath("/info", ""), `${PREFIXED}/info`);
  assert.equal(routingPath("/healthz", ""), "/healthz");
  assert.equal(routingPath("/api/reload", "api"), "/api/reload");
  assert.equal(routingPath("/admin/info", null), "/admin/info");
  assert.notEqual(routingPath(`${PREFIXED}/info`, "admin"), `${PREFIXED}/info`);
  assert.notEqual(routingPath(`${PREFIXED}/info`, ""), `${PREFIXED}/info`);
});

Deno.test("pathOf strips query and fragment", () => {
  assert.equal(pathOf("http://h:1/a/b?x=1#y"), "/a/b");
  assert.equal(pathOf("http://h:1/a#y?x"), "/a");
  assert.equal(pathOf("http://h:1"), "/");
  assert.equal(pathOf("https://h/"), "/");
});

Deno.test("allowedMethods adds HEAD to GET and skips middleware", () => {
  const m = allowedMethods([
    { method: "ALL", path: "*" },
    { method: "GET", path: "/a" },
    { method: "POST", path: "/a" },
    { method: "POST", path: "/b" },
  ]);
  assert.deepEqual(m.get("/a"), ["GET", "HEAD", "POST"]);
  assert.deepEqual(m.get("/b"), ["POST"]);
  assert.equal(m.get("*"), undefined);
});
