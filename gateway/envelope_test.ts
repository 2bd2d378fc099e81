import { assertEquals } from "../tests/assert.ts";
import { Body, headersToObject, RequestEnvelope, ResponseEnvelope } from "./envelope.ts";
import { BodyLease, MemoryBudget } from "./memory/mod.ts";

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

/** A stream of `chunks` that notes how many were read. */
function counted(chunks: Uint8Array[]): { stream: ReadableStream<Uint8Array>; read: () => number } {
  let read = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (cancelled || read === chunks.length) return controller.close();
      controller.enqueue(chunks[read++]);
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, read: () => read };
}

Deno.test("Body memory lease: a declared length is counted, or refused before a byte is read", async () => {
  const budget = new MemoryBudget(100);
  const first = new BodyLease(budget);
  const a = new Body(counted([new Uint8Array(60)]).stream, "application/json", undefined, 60);
  a.chargeTo(first);
  assertEquals((await a.bytes()).byteLength, 60);
  assertEquals(budget.used, 60);

  const source = counted([new Uint8Array(50)]);
  const b = new Body(source.stream, "application/json", undefined, 50);
  b.chargeTo(new BodyLease(budget));
  const err = await b.bytes().catch((e) => e);
  assertEquals([err.status, err.code], [503, "memory_pressure"]);
  assertEquals(source.read(), 0);
  first.release();
  assertEquals(budget.used, 0);
});

Deno.test("Body memory lease: a body of unknown length is counted as it arrives", async () => {
  const budget = new MemoryBudget(100);
  new BodyLease(budget).take(50);
  const source = counted([new Uint8Array(30), new Uint8Array(30), new Uint8Array(30)]);
  const body = new Body(source.stream, "application/json");
  const lease = new BodyLease(budget);
  body.chargeTo(lease);
  const err = await body.bytes().catch((e) => e);
  assertEquals(err.code, "memory_pressure");
  assertEquals([source.read(), lease.held], [2, 30]);
});

Deno.test("Body memory lease: a small body read ahead counts when it is parsed; a request's bodies count on its lease", async () => {
  const budget = new MemoryBudget(1000);
  const lease = new BodyLease(budget);
  const req = new RequestEnvelope({
    id: "r",
    protocol: "http",
    method: "POST",
    path: "/",
    endpoint: "e",
    memory: lease,
  });
  req.body = new Body(new TextEncoder().encode('{"a":1}'), "application/json");
  assertEquals(lease.held, 0);
  assertEquals(await req.body.data(), { a: 1 });
  assertEquals(lease.held, 7);
  // Forwarding untouched streams costs nothing.
  const streamed = new Body(
    counted([new Uint8Array(500)]).stream,
    "application/json",
    undefined,
    500,
  );
  req.body = streamed;
  streamed.forwardable();
  assertEquals(lease.held, 7);
});

Deno.test("Body: an upstream answer that breaks off while it is read is 502 upstream_body_failed", async () => {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ === 0) controller.enqueue(new Uint8Array(10));
      else controller.error(new Error("response body truncated"));
    },
  });
  const body = new Body(stream, "application/json", undefined, 100, false);
  body.limitAsUpstream("pacs", 1000);
  const err = await body.bytes().catch((e) => e);
  assertEquals([err.status, err.code], [502, "upstream_body_failed"]);
  assertEquals(err.message, "backend pacs's answer broke off after 10 bytes");
  assertEquals(err.internal, "response body truncated");
});
