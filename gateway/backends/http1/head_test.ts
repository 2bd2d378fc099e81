import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { Http1Error } from "./errors.ts";
import { buildRequestHead, joinHead } from "./head.ts";
import { findHeadEnd, parseResponseHead } from "./response_head.ts";

const encoder = new TextEncoder();
const url = new URL("http://upstream.test:8080/a/b?x=1&y=%20");

function parse(text: string) {
  const bytes = encoder.encode(text);
  const end = findHeadEnd(bytes, 0, bytes.length);
  assert(end !== -1, "head end not found");
  return parseResponseHead(bytes, 0, end);
}

Deno.test("request head: line, host from the URL, fields, no length for GET", () => {
  const head = buildRequestHead("GET", url, new Headers({ "X-Trace": "a b", accept: "*/*" }), null);
  assertEquals(
    head.text,
    "GET /a/b?x=1&y=%20 HTTP/1.1\r\nhost: upstream.test:8080\r\naccept: */*\r\nx-trace: a b\r\n\r\n",
  );
  assertEquals(head.framing, "none");
  assertEquals(head.close, false);
});

Deno.test("request head: a caller's host is kept and not duplicated", () => {
  const head = buildRequestHead("HEAD", url, new Headers({ host: "public.example" }), null);
  assertEquals(head.text.match(/host:/g)?.length, 1);
  assert(head.text.includes("host: public.example\r\n"));
  assert(!head.text.includes("content-length"));
});

Deno.test("request head: Uint8Array bodies get content-length, streams chunked", () => {
  const headers = new Headers({ "transfer-encoding": "gzip", expect: "100-continue" });
  const bytes = buildRequestHead("POST", url, headers, new Uint8Array(5));
  assertEquals(bytes.framing, "length");
  assertEquals(bytes.length, 5);
  assert(bytes.text.endsWith("content-length: 5\r\n\r\n"));
  assert(!bytes.text.includes("expect") && !bytes.text.includes("gzip"));
  const stream = buildRequestHead("PUT", url, new Headers(), new ReadableStream());
  assertEquals(stream.framing, "chunked");
  assert(stream.text.endsWith("transfer-encoding: chunked\r\n\r\n"));
});

Deno.test("request head: a stream with the caller's content-length is sent raw", () => {
  const head = buildRequestHead(
    "PUT",
    url,
    new Headers({ "content-length": "42" }),
    new ReadableStream(),
  );
  assertEquals([head.framing, head.length], ["length", 42]);
  assertEquals(head.text.match(/content-length/g)?.length, 1);
  assert(!head.text.includes("transfer-encoding"));
});

Deno.test("request head: POST without a body says content-length 0, DELETE says nothing", () => {
  assert(buildRequestHead("POST", url, new Headers(), null).text.includes("content-length: 0\r\n"));
  assert(!buildRequestHead("DELETE", url, new Headers(), null).text.includes("content-length"));
});

Deno.test("request head: an empty Uint8Array on GET sends no length", () => {
  assert(!buildRequestHead("GET", url, new Headers(), new Uint8Array(0)).text.includes("length"));
  assert(buildRequestHead("PUT", url, new Headers(), new Uint8Array(0)).text.includes("length: 0"));
});

Deno.test("request head: connection close is noticed", () => {
  assert(buildRequestHead("GET", url, new Headers({ connection: "Close" }), null).close);
});

Deno.test("request head: CR/LF injection and bad methods are refused", async () => {
  // Real Headers refuse CR/LF themselves; the client must not rely on it.
  const fakeHeaders = (name: string, value: string) =>
    ({ forEach: (fn: (value: string, name: string) => void) => fn(value, name) }) as Headers;
  const fake = fakeHeaders("x-evil", "a\r\nx-injected: 1");
  const error = await assertRejects(() => buildRequestHead("GET", url, fake, null), /invalid/);
  assertEquals((error as Http1Error).code, "invalid_request");
  const badName = fakeHeaders("x evil", "1");
  await assertRejects(() => buildRequestHead("GET", url, badName, null), /invalid request header/);
  await assertRejects(
    () => buildRequestHead("GET /x HTTP/1.1\r\n", url, new Headers(), null),
    /invalid request method/,
  );
  await assertRejects(
    () =>
      buildRequestHead("PUT", url, new Headers({ "content-length": "-1" }), new ReadableStream()),
    /invalid request content-length/,
  );
});

Deno.test("request head: latin-1 field values stay single bytes; joinHead adds the body", () => {
  const fake = { forEach: (fn: (value: string, name: string) => void) => fn("\u00e9", "a") };
  const head = buildRequestHead("GET", new URL("http://h/"), fake, null);
  assertEquals([...head.bytes.subarray(25, 31)], [97, 58, 32, 0xe9, 13, 10]);
  assertEquals(head.text, "GET / HTTP/1.1\r\nhost: h\r\na: \u00e9\r\n\r\n");
  const out = joinHead(new Uint8Array([65, 13, 10]), new Uint8Array([1, 2]), new Uint8Array(64));
  assertEquals([...out], [65, 13, 10, 1, 2]);
});

Deno.test("request head: a large head grows the scratch buffer, the next one starts clean", () => {
  const big = "v".repeat(20_000);
  const fake = { forEach: (fn: (value: string, name: string) => void) => fn(big, "x-big") };
  assert(buildRequestHead("GET", url, fake, null).text.includes(`x-big: ${big}\r\n`));
  const small = buildRequestHead("GET", url, new Headers({ a: "1" }), null);
  assertEquals(
    small.text,
    "GET /a/b?x=1&y=%20 HTTP/1.1\r\nhost: upstream.test:8080\r\na: 1\r\n\r\n",
  );
});

Deno.test("findHeadEnd: CRLF, bare LF, incomplete and straddling heads", () => {
  const bytes = encoder.encode("HTTP/1.1 200 OK\r\nA: 1\r\n\r\nbody");
  assertEquals(findHeadEnd(bytes, 0, bytes.length), bytes.length - 4);
  assertEquals(findHeadEnd(bytes, 0, bytes.length - 5), -1);
  assertEquals(findHeadEnd(bytes, 20, bytes.length), bytes.length - 4);
  const lf = encoder.encode("HTTP/1.1 200 OK\nA: 1\n\nx");
  assertEquals(findHeadEnd(lf, 0, lf.length), lf.length - 1);
});

Deno.test("response head: status, reason, duplicate and case-insensitive fields", () => {
  const head = parse(
    "HTTP/1.1 201 Created Now\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nCONTENT-LENGTH: 12\r\n" +
      "X-Empty:\r\nX-Space:   v  \r\n\r\n",
  );
  assertEquals([head.status, head.statusText, head.minor], [201, "Created Now", 1]);
  assertEquals(head.contentLength, 12);
  assertEquals(head.close, false);
  assertEquals(head.fields, [
    "set-cookie",
    "a=1",
    "set-cookie",
    "b=2",
    "content-length",
    "12",
    "x-empty",
    "",
    "x-space",
    "v",
  ]);
  const headers = new Headers();
  for (let i = 0; i < head.fields.length; i += 2) {
    headers.append(head.fields[i], head.fields[i + 1]);
  }
  assertEquals(headers.getSetCookie(), ["a=1", "b=2"]);
});

Deno.test("response head: status line without a reason phrase", () => {
  assertEquals(parse("HTTP/1.1 204\r\n\r\n").statusText, "");
});

Deno.test("response head: connection close, HTTP/1.0 and transfer-encoding with length", () => {
  assert(parse("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n\r\n").close);
  assert(parse("HTTP/1.0 200 OK\r\n\r\n").close);
  assert(!parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n").close);
  const both = parse(
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n",
  );
  assertEquals(both.transferCoding, "chunked");
  assert(both.close);
});

Deno.test("response head: a value reused while it repeats is never a stale one", () => {
  assertEquals(parse("HTTP/1.1 200 OK\r\nServer: nginx\r\n\r\n").fields, ["server", "nginx"]);
  assertEquals(parse("HTTP/1.1 200 OK\r\nServer: nginx\r\n\r\n").fields, ["server", "nginx"]);
  assertEquals(parse("HTTP/1.1 200 OK\r\nServer: nginy\r\n\r\n").fields, ["server", "nginy"]);
  assertEquals(parse("HTTP/1.1 200 OK\r\nSERVER: ngin\r\n\r\n").fields, ["server", "ngin"]);
});

Deno.test("response head: hop-by-hop fields and those Connection names are left out", () => {
  const head = parse(
    "HTTP/1.1 200 OK\r\nServer: x\r\nConnection: keep-alive, X-Hop\r\nKeep-Alive: 5\r\n" +
      "X-Hop: 1\r\nTransfer-Encoding: chunked\r\nContent-Type: a/b\r\n\r\n",
  );
  assertEquals(head.fields, ["server", "x", "content-type", "a/b"]);
  assertEquals([head.close, head.transferCoding], [false, "chunked"]);
});

Deno.test("response head: malformed heads are protocol errors", async () => {
  const cases: [string, RegExp][] = [
    ["garbage\r\n\r\n", /invalid status line/],
    ["HTTP/2 200 OK\r\n\r\n", /invalid status line/],
    ["HTTP/1.1 20 OK\r\n\r\n", /invalid status line/],
    ["HTTP/1.1 2000 OK\r\n\r\n", /invalid status line/],
    ["HTTP/1.1 099 OK\r\n\r\n", /invalid status line/],
    ["HTTP/1.1 200 OK\r\nA: 1\r\n  folded\r\n\r\n", /obsolete line folding/],
    ["HTTP/1.1 200 OK\r\nno colon\r\n\r\n", /malformed header line/],
    ["HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n", /invalid header name/],
    ["HTTP/1.1 200 OK\r\nA: x\ry\r\n\r\n", /invalid value/],
    ["HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", /invalid content-length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n", /invalid content-length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", /invalid content-length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", /conflicting/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", /invalid content-length/],
  ];
  for (const [text, pattern] of cases) {
    const error = await assertRejects(() => parse(text), pattern);
    assertEquals((error as Http1Error).code, "protocol", text);
  }
  assertEquals(parse("HTTP/1.1 200 OK\r\nContent-Length: 7, 7\r\n\r\n").contentLength, 7);
});

Deno.test("response head: latin-1 bytes survive", () => {
  const bytes = new Uint8Array([
    ...encoder.encode("HTTP/1.1 200 OK\r\nX: caf"),
    0xe9,
    13,
    10,
    13,
    10,
  ]);
  const head = parseResponseHead(bytes, 0, findHeadEnd(bytes, 0, bytes.length));
  assertEquals(head.fields, ["x", "caf\u00e9"]);
});
