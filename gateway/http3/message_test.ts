import { deepEqual, equal, throws } from "node:assert/strict";
import { H3, Http3Error } from "./errors.ts";
import { declaredLength, outgoingFields, parseRequestHead, parseResponseHead } from "./message.ts";

const f = (list: [string, string][]) => list.map(([name, value]) => ({ name, value }));
const isMessageError = (e: Http3Error) => e.code === H3.MESSAGE_ERROR && e.scope === "stream";

Deno.test("message: a valid request", () => {
  const head = parseRequestHead(f([
    [":method", "POST"],
    [":scheme", "https"],
    [":authority", "example.org:8443"],
    [":path", "/a?b=c"],
    ["content-type", "application/json"],
    ["cookie", "a=1"],
    ["cookie", "b=2"],
  ]));
  equal(head.method, "POST");
  equal(head.authority, "example.org:8443");
  equal(head.path, "/a?b=c");
  equal(head.headers.get("cookie"), "a=1; b=2");
});

Deno.test("message: malformed requests are H3_MESSAGE_ERROR", () => {
  const base: [string, string][] = [[":method", "GET"], [":scheme", "https"], [":path", "/"]];
  const cases: [string, string][][] = [
    [[":scheme", "https"], [":path", "/"], [":authority", "a"]], // no :method
    [...base], // no :authority nor host
    [[":method", "GET"], [":scheme", "https"], [":authority", "a"]], // no :path
    [...base, [":authority", "a"], [":authority", "b"]], // repeated
    [...base, [":authority", "a"], [":status", "200"]], // response pseudo-header
    [...base, ["x", "1"], [":authority", "a"]], // pseudo after regular
    [...base, [":authority", "a"], ["Upper", "1"]], // uppercase name
    [...base, [":authority", "a"], ["connection", "close"]], // connection-specific
    [...base, [":authority", "a"], ["te", "gzip"]],
    [...base, [":authority", "a"], ["host", "b"]], // host differs
    [...base, [":authority", "a"], ["x", "a\nb"]], // LF in value
  ];
  for (const c of cases) throws(() => parseRequestHead(f(c)), isMessageError, JSON.stringify(c));
  // host alone stands for :authority
  equal(parseRequestHead(f([...base, ["host", "h:1"]])).authority, "h:1");
});

Deno.test("message: responses", () => {
  const r = parseResponseHead(f([[":status", "204"], ["x-a", "1"]]));
  equal(r.status, 204);
  equal(r.headers.get("x-a"), "1");
  for (const bad of [[], [[":status", "20"]], [[":status", "200"], [":status", "200"]]]) {
    throws(() => parseResponseHead(f(bad as [string, string][])), isMessageError);
  }
  throws(() => parseResponseHead(f([[":status", "200"], [":path", "/"]])), isMessageError);
});

Deno.test("message: outgoing fields drop connection-specific ones and keep set-cookie apart", () => {
  const h = new Headers([
    ["connection", "close"],
    ["host", "x"],
    ["set-cookie", "a=1"],
    [
      "set-cookie",
      "b=2",
    ],
    ["x-a", "1"],
    ["transfer-encoding", "chunked"],
  ]);
  deepEqual(outgoingFields(h), [["x-a", "1"], ["set-cookie", "a=1"], ["set-cookie", "b=2"]]);
  equal(declaredLength(new Headers({ "content-length": "12" })), 12);
  equal(declaredLength(new Headers()), null);
  throws(() => declaredLength(new Headers({ "content-length": "1, 2" })), isMessageError);
});
