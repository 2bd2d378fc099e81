import { assertEquals } from "../tests/assert.ts";
import { Body, headersToObject, ResponseEnvelope } from "./envelope.ts";

Deno.test("headersToObject: repeated fields joined, set-cookie kept as a list", () => {
  const headers = new Headers();
  headers.append("Accept", "a/b");
  headers.append("accept", "c/d");
  headers.append("set-cookie", "a=1");
  headers.append("set-cookie", "b=2");
  headers.set("x-one", "1");
  assertEquals(headersToObject(headers), {
    accept: "a/b, c/d",
    "set-cookie": ["a=1", "b=2"],
    "x-one": "1",
  });
  assertEquals(headersToObject(new Headers({ a: "1" })), { a: "1" });
});

Deno.test("ResponseEnvelope: raw fields become Headers only when read, and stay in order", () => {
  const res = ResponseEnvelope.fromFields(
    200,
    ["Content-Type", "text/plain", "Set-Cookie", "a=1", "Set-Cookie", "b=2"],
    new Body(new Uint8Array([104]), "text/plain"),
  );
  const seen: string[] = [];
  res.forEachHeader((value, name) => seen.push(`${name}: ${value}`));
  assertEquals(seen, ["Content-Type: text/plain", "Set-Cookie: a=1", "Set-Cookie: b=2"]);

  res.headers.set("x-added", "yes");
  assertEquals(res.headers.getSetCookie(), ["a=1", "b=2"]);
  const after: string[] = [];
  res.forEachHeader((value, name) => after.push(`${name}: ${value}`));
  assertEquals(after, [
    "content-type: text/plain",
    "set-cookie: a=1",
    "set-cookie: b=2",
    "x-added: yes",
  ]);

  res.headers = new Headers({ only: "1" });
  const replaced: string[] = [];
  res.forEachHeader((value, name) => replaced.push(`${name}: ${value}`));
  assertEquals(replaced, ["only: 1"]);
});
