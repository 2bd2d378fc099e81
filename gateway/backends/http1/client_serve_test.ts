/** The client against `Deno.serve` upstreams (hyper on the other side). */

import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { freePort } from "../../../tests/support/mod.ts";
import { type Http1Error } from "./mod.ts";
import {
  drain,
  pattern,
  patternByteStream,
  patternStream,
  send,
  serveUpstream,
  sha256,
  testClient,
} from "../../../tests/support/http1_servers.ts";

/** Answers with what it received: method, path, body length and hash, framing headers. */
async function echo(req: Request): Promise<Response> {
  const body = new Uint8Array(await req.arrayBuffer());
  const url = new URL(req.url);
  return Response.json({
    method: req.method,
    path: url.pathname + url.search,
    host: req.headers.get("host"),
    length: body.length,
    sha: await sha256(body),
    contentLength: req.headers.get("content-length"),
    transferEncoding: req.headers.get("transfer-encoding"),
    custom: req.headers.get("x-custom"),
  }, { headers: { "x-method": req.method } });
}

Deno.test("Deno.serve: GET, POST, PUT, DELETE and HEAD on one kept-alive connection", async () => {
  const upstream = serveUpstream(echo);
  const client = testClient();
  try {
    const get = await send(client, `${upstream.url}/p/q?a=1&b=two`, {
      headers: new Headers({ "x-custom": "yes" }),
    });
    assertEquals(get.status, 200);
    assertEquals(get.statusText, "OK");
    const got = await get.json();
    assertEquals([got.method, got.path, got.custom], ["GET", "/p/q?a=1&b=two", "yes"]);
    assertEquals(got.host, new URL(upstream.url).host);
    assertEquals([got.contentLength, got.transferEncoding], [null, null]);

    // Small bodies: Deno.serve answers larger ones with `connection: close` (see below).
    const body = pattern(100);
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await send(client, `${upstream.url}/m`, { method, body });
      const echoed = await res.json();
      assertEquals([echoed.method, echoed.length, echoed.contentLength], [method, 100, "100"]);
      assertEquals(echoed.sha, await sha256(body));
    }

    const head = await send(client, `${upstream.url}/h`, { method: "HEAD" });
    assertEquals(head.status, 200);
    assertEquals(head.body, null);
    assertEquals(head.headers.get("x-method"), "HEAD");
    // A HEAD answer has no body even with a content-length: the next request still works.
    const after = await send(client, `${upstream.url}/after`);
    assertEquals((await after.json()).path, "/after");
    assertEquals(upstream.connections.size, 1);

    // Deno.serve closes after a request body of 1000 bytes: the client must not reuse that socket.
    const closing = await send(client, `${upstream.url}/c`, {
      method: "POST",
      body: pattern(1000),
    });
    // Connection fields are the client's business: they never reach the Response.
    assertEquals(closing.headers.get("connection"), null);
    assertEquals((await closing.json()).length, 1000);
    assertEquals(client.idleConnections, 0);
    assertEquals((await (await send(client, `${upstream.url}/n`)).json()).path, "/n");
    assertEquals(upstream.connections.size, 2);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: stream bodies go chunked, large Uint8Array bodies intact", async () => {
  const upstream = serveUpstream(echo);
  const client = testClient();
  try {
    const streamed = await send(client, `${upstream.url}/s`, {
      method: "POST",
      body: patternStream(3 * 1024 * 1024 + 17, 10_000),
    });
    const echoed = await streamed.json();
    assertEquals([echoed.length, echoed.transferEncoding], [3 * 1024 * 1024 + 17, "chunked"]);
    assertEquals(echoed.sha, await sha256(pattern(3 * 1024 * 1024 + 17)));

    // A byte stream is read with BYOB into one reused buffer, chunked or with a declared length.
    for (const headers of [new Headers(), new Headers({ "content-length": "1000003" })]) {
      const res = await send(client, `${upstream.url}/byob`, {
        method: "PUT",
        headers,
        body: patternByteStream(1_000_003),
      });
      const byob = await res.json();
      assertEquals(byob.length, 1_000_003);
      assertEquals(byob.sha, await sha256(pattern(1_000_003)));
    }

    const big = pattern(2 * 1024 * 1024 + 3);
    const res = await send(client, `${upstream.url}/b`, { method: "PUT", body: big });
    const bigEcho = await res.json();
    assertEquals([bigEcho.length, bigEcho.sha], [big.length, await sha256(big)]);

    const empty = await send(client, `${upstream.url}/e`, {
      method: "POST",
      body: new ReadableStream({ start: (c) => c.close() }),
    });
    assertEquals((await empty.json()).length, 0);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: 1 MiB and 20 MiB responses stream in chunks", async () => {
  const upstream = serveUpstream((req) => {
    const size = Number(new URL(req.url).searchParams.get("size"));
    return new Response(patternStream(size));
  });
  const client = testClient();
  try {
    for (const size of [1024 * 1024, 20 * 1024 * 1024]) {
      const res = await send(client, `${upstream.url}/?size=${size}`);
      // Chunked framing is decoded here; the field itself is hop-by-hop and left out.
      assertEquals(res.headers.get("transfer-encoding"), null);
      const { bytes, chunks, ok } = await drain(res.body);
      assertEquals(bytes, size);
      assert(ok, "body bytes differ");
      assert(chunks >= size / (64 * 1024), `only ${chunks} chunks: not streamed`);
    }
    assertEquals(upstream.connections.size, 1);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: set-cookie twice stays two values", async () => {
  const upstream = serveUpstream(() => {
    const headers = new Headers({ "x-one": "1" });
    headers.append("set-cookie", "a=1; Path=/");
    headers.append("set-cookie", "b=2; HttpOnly");
    headers.append("x-list", "p");
    headers.append("x-list", "q");
    return new Response("ok", { headers });
  });
  const client = testClient();
  try {
    const res = await send(client, upstream.url);
    assertEquals(res.headers.getSetCookie(), ["a=1; Path=/", "b=2; HttpOnly"]);
    assertEquals(res.headers.get("x-list"), "p, q");
    assertEquals(await res.text(), "ok");
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: 204, 304, 404 and 500 answers, connection reused", async () => {
  const upstream = serveUpstream((req) => {
    const status = Number(new URL(req.url).pathname.slice(1));
    const body = status === 204 || status === 304 ? null : `status ${status}`;
    return new Response(body, { status, headers: { etag: '"x"' } });
  });
  const client = testClient();
  try {
    for (const status of [204, 304, 404, 500, 204, 200]) {
      const res = await send(client, `${upstream.url}/${status}`);
      assertEquals(res.status, status);
      if (status === 204 || status === 304) assertEquals(res.body, null);
      else assertEquals(await res.text(), `status ${status}`);
    }
    assertEquals(upstream.connections.size, 1);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: keep-alive reuse, sequential and concurrent", async () => {
  const upstream = serveUpstream(() => new Response("x".repeat(100)));
  const client = testClient({ maxIdlePerOrigin: 8 });
  try {
    for (let i = 0; i < 50; i++) {
      assertEquals(await (await send(client, upstream.url)).text(), "x".repeat(100));
    }
    assertEquals(upstream.connections.size, 1);
    assertEquals(client.stats.connects, 1);
    // 8 at once need 8 sockets; the next rounds reuse them.
    for (let round = 0; round < 3; round++) {
      const texts = await Promise.all(
        Array.from({ length: 8 }, () => send(client, upstream.url).then((r) => r.text())),
      );
      assert(texts.every((t) => t.length === 100));
    }
    assertEquals(client.stats.connects, 8);
    assertEquals(client.idleConnections, 8);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: maxIdlePerOrigin 0 keeps no socket", async () => {
  const upstream = serveUpstream(() => new Response("x"));
  const client = testClient({ maxIdlePerOrigin: 0 });
  try {
    for (let i = 0; i < 3; i++) assertEquals(await (await send(client, upstream.url)).text(), "x");
    assertEquals([client.stats.connects, client.idleConnections], [3, 0]);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: aborting mid-body errors the body with the reason and closes the socket", async () => {
  let cancelled: () => void;
  const upstreamCancelled = new Promise<void>((resolve) => cancelled = resolve);
  const upstream = serveUpstream(() =>
    new Response(
      new ReadableStream({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          controller.enqueue(pattern(1024));
        },
        cancel: () => cancelled(),
      }),
    )
  );
  const client = testClient();
  try {
    const controller = new AbortController();
    const res = await send(client, upstream.url, { signal: controller.signal });
    const reader = res.body!.getReader();
    assert(!(await reader.read()).done);
    const reason = new Error("caller went away");
    controller.abort(reason);
    const error = await assertRejects(async () => {
      for (;;) if ((await reader.read()).done) break;
    });
    assert(error === reason, `rejected with ${error}`);
    await upstreamCancelled;
    assertEquals(client.idleConnections, 0);
    // The client keeps working on a new connection.
    const again = await send(client, `${upstream.url}/again`, { method: "HEAD" });
    assertEquals(again.status, 200);
    assertEquals(upstream.connections.size, 2);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: a body cancelled by its reader closes that socket", async () => {
  const upstream = serveUpstream(() => new Response(patternStream(10 * 1024 * 1024)));
  const client = testClient();
  try {
    const res = await send(client, upstream.url);
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    assertEquals(client.idleConnections, 0);
    await (await send(client, upstream.url)).body!.cancel();
    assertEquals(client.stats.connects, 2);
  } finally {
    await client.close();
    await upstream.stop();
  }
});

Deno.test("Deno.serve: a timeout signal surfaces as TimeoutError", async () => {
  let release: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const upstream = serveUpstream(async () => {
    await released;
    return new Response("late");
  });
  const client = testClient();
  try {
    const started = Date.now();
    const error = await assertRejects(() =>
      send(client, upstream.url, { signal: AbortSignal.timeout(150) })
    );
    assert(error instanceof DOMException && error.name === "TimeoutError", `got ${error}`);
    assert(Date.now() - started < 2000);
    const aborted = new AbortController();
    aborted.abort(new Error("already"));
    await assertRejects(() => send(client, upstream.url, { signal: aborted.signal }), /already/);
  } finally {
    release!();
    await client.close();
    await upstream.stop();
  }
});

Deno.test("connection refused rejects with a message that says so", async () => {
  const client = testClient();
  try {
    const error = await assertRejects(
      () => send(client, `http://127.0.0.1:${freePort()}/`),
      /connection refused/,
    );
    assertEquals((error as Http1Error).code, "connection_refused");
  } finally {
    await client.close();
  }
});

Deno.test("a closed client refuses requests", async () => {
  const client = testClient();
  await client.close();
  await assertRejects(() => send(client, "http://127.0.0.1:9/"), /client is closed/);
  await assertRejects(() => send(testClient(), "ftp://127.0.0.1/"), /unsupported URL scheme/);
});
