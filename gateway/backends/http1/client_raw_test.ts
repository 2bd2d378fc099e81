/** The client against raw `Deno.listen` peers that write exact (and broken) HTTP/1.1 bytes. */

import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import type { Http1Error } from "./mod.ts";
import {
  drain,
  pattern,
  patternStream,
  type RawConn,
  type RawServer,
  rawServer,
  send,
  testClient,
} from "../../../tests/support/http1_servers.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 10 ms until it holds (fails after `timeoutMs`, for slow shared machines). */
async function eventually(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}
const OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/** A raw server answering every request with `answer(request)`, reading request bodies first. */
function answering(
  answer: (target: string, conn: RawConn) => string | Promise<string>,
): RawServer {
  return rawServer(async (conn) => {
    for (;;) {
      const req = await conn.readRequest();
      if (!req) return;
      await conn.readBody(req);
      if (!(await conn.write(await answer(req.target, conn)))) return;
    }
  });
}

/** Runs `fn` with a fresh client and `server`, then closes both. */
async function withPeer(
  server: RawServer,
  fn: (client: ReturnType<typeof testClient>) => Promise<void>,
  options: Parameters<typeof testClient>[0] = {},
): Promise<void> {
  const client = testClient(options);
  try {
    await fn(client);
  } finally {
    await client.close();
    await server.stop();
  }
}

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp, code: string) {
  const error = await assertRejects(() => promise, pattern);
  assertEquals((error as Http1Error).code, code, error.message);
}

Deno.test("raw: chunked body with extensions and trailers split across writes; socket reused", async () => {
  const server = rawServer(async (conn) => {
    for (;;) {
      if (!(await conn.readRequest())) return;
      const parts = [
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n",
        "5;ext=1;other\r\nhel",
        "lo\r\n",
        "1 ; spaced\r\n,\r\n6\r\n world\r\n0\r\nX-Sum: 42\r\n",
        "X-More: 1\r\n\r\n",
      ];
      for (const part of parts) {
        await conn.write(part);
        await sleep(2);
      }
    }
  });
  await withPeer(server, async (client) => {
    for (let i = 0; i < 3; i++) {
      const res = await send(client, server.url);
      assertEquals(await res.text(), "hello, world");
      assertEquals(res.headers.get("x-sum"), null);
    }
    assertEquals(server.accepted, 1);
  });
});

Deno.test("raw: read-until-close body, then a new connection", async () => {
  const server = rawServer(async (conn) => {
    if (!(await conn.readRequest())) return;
    await conn.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part, ");
    await sleep(10);
    await conn.write("second part");
  });
  await withPeer(server, async (client) => {
    assertEquals(await (await send(client, server.url)).text(), "first part, second part");
    assertEquals(await (await send(client, server.url)).text(), "first part, second part");
    assertEquals(server.accepted, 2);
  });
});

Deno.test("raw: connection close, HTTP/1.0, length with chunked, extra bytes: not reused", async () => {
  const replies: [string, string, boolean][] = [
    ["close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false],
    ["http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false],
    [
      "http/1.0 keep-alive",
      "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
      true,
    ],
    [
      "length and chunked",
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
      false,
    ],
    ["bytes after the body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", false],
    ["plain keep-alive", OK, true],
  ];
  for (const [name, reply, reused] of replies) {
    const server = answering((target) => target === "/first" ? reply : OK);
    await withPeer(server, async (client) => {
      assertEquals(await (await send(client, `${server.url}/first`)).text(), "ok", name);
      assertEquals(await (await send(client, `${server.url}/second`)).text(), "ok", name);
      assertEquals(server.accepted, reused ? 1 : 2, name);
    });
  }
});

Deno.test("raw: the caller's connection close is sent and honoured", async () => {
  const seen: string[] = [];
  const server = rawServer(async (conn) => {
    for (;;) {
      const req = await conn.readRequest();
      if (!req) return;
      seen.push(req.headers.get("connection") ?? "");
      await conn.write(OK);
    }
  });
  await withPeer(server, async (client) => {
    await (await send(client, server.url, { headers: new Headers({ connection: "close" }) }))
      .text();
    await (await send(client, server.url)).text();
    assertEquals(seen, ["close", ""]);
    assertEquals(server.accepted, 2);
  });
});

Deno.test("raw: 1xx informational answers are skipped; Expect is never sent", async () => {
  const heads: string[] = [];
  const server = rawServer(async (conn) => {
    for (;;) {
      const req = await conn.readRequest();
      if (!req) return;
      heads.push(req.head);
      await conn.write("HTTP/1.1 100 Continue\r\n\r\n");
      const body = await conn.readBody(req);
      await conn.write("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n");
      await sleep(2);
      await conn.write(`HTTP/1.1 201 Created\r\nContent-Length: ${body.length}\r\n\r\n`);
      await conn.write(body);
    }
  });
  await withPeer(server, async (client) => {
    for (let i = 0; i < 2; i++) {
      const res = await send(client, server.url, {
        method: "POST",
        headers: new Headers({ expect: "100-continue" }),
        body: new TextEncoder().encode("payload"),
      });
      assertEquals([res.status, res.headers.get("link")], [201, null]);
      assertEquals(await res.text(), "payload");
    }
    assert(heads.every((head) => !/expect/i.test(head)), heads.join("\n"));
    assertEquals(server.accepted, 1);
  });
});

Deno.test("raw: malformed heads reject cleanly and close the socket", async () => {
  const cases: [string, RegExp][] = [
    ["garbage\r\n\r\n", /invalid status line/],
    ["HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", /invalid content-length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 123456789012345678901\r\n\r\n", /invalid content-length/],
    ["HTTP/1.1 200 OK\r\nX: 1\r\n folded\r\n\r\n", /obsolete line folding/],
    ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", /upgrades are not supported/],
    ["HTTP/1.1 700 Odd\r\nContent-Length: 0\r\n\r\n", /unsupported response status 700/],
    ["HTTP/1.1 200 OK\r\nX-Half: ", /closed in the middle of the response head/],
    [
      "HTTP/1.1 200 OK\r\nX-Big: " + "a".repeat(100 * 1024) + "\r\n\r\n",
      /larger than maxHeaderBytes/,
    ],
    ["\x00\x01\x02 binary junk without any line end", /closed in the middle of the response head/],
  ];
  for (const [reply, pattern] of cases) {
    let closedByClient = false;
    const server = rawServer(async (conn) => {
      if (!(await conn.readRequest())) return;
      await conn.write(reply);
      // The half-written head case: close our side so the client sees EOF.
      if (!reply.endsWith("\r\n\r\n") || reply.startsWith("HTTP/1.1 200 OK\r\nX-Half")) {
        conn.close();
        closedByClient = true;
        return;
      }
      closedByClient = (await conn.readRequest()) === null;
    });
    await withPeer(server, async (client) => {
      await rejectsWith(send(client, server.url), pattern, "protocol");
      assertEquals(client.idleConnections, 0);
    });
    assert(closedByClient, `socket left open after ${JSON.stringify(reply.slice(0, 30))}`);
  }
});

Deno.test("raw: maxHeaderBytes is configurable", async () => {
  const server = answering(() =>
    `HTTP/1.1 200 OK\r\nX: ${"b".repeat(300)}\r\nContent-Length: 0\r\n\r\n`
  );
  await withPeer(server, async (client) => {
    await rejectsWith(send(client, server.url), /larger than maxHeaderBytes \(256\)/, "protocol");
  }, { maxHeaderBytes: 256 });
});

Deno.test("raw: truncated or broken bodies reject (or error the body stream)", async () => {
  const cases: [string, RegExp][] = [
    [
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this",
      /truncated: the connection closed after 9 of 100 bytes/,
    ],
    [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
      /closed before the last chunk/,
    ],
    [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX",
      /missing CRLF after chunk data/,
    ],
    [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n",
      /chunk size is not a hex number/,
    ],
  ];
  for (const [reply, pattern] of cases) {
    const server = rawServer(async (conn) => {
      if (!(await conn.readRequest())) return;
      await conn.write(reply);
      await sleep(5);
    });
    await withPeer(server, async (client) => {
      // Whether the head's read already held the fault decides which of the two fails.
      await rejectsWith(send(client, server.url).then((res) => res.text()), pattern, "protocol");
      assertEquals(client.idleConnections, 0);
    });
  }
});

Deno.test("raw: small requests leave in one write", async () => {
  let first = "";
  const server = rawServer(async (conn) => {
    const buf = new Uint8Array(65536);
    const n = await conn.conn.read(buf);
    first = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    await conn.write(OK);
  });
  await withPeer(server, async (client) => {
    const body = new TextEncoder().encode("a=1&b=2");
    await (await send(client, `${server.url}/form`, { method: "POST", body })).text();
    assert(first.startsWith("POST /form HTTP/1.1\r\n"), first);
    assert(first.endsWith("content-length: 7\r\n\r\na=1&b=2"), first);
  });
});

Deno.test("raw: a stream with a declared length is sent raw; a wrong length fails", async () => {
  const received: string[] = [];
  const server = rawServer(async (conn) => {
    for (;;) {
      const req = await conn.readRequest();
      if (!req) return;
      received.push(`${req.headers.get("content-length")}:${req.headers.get("transfer-encoding")}`);
      await conn.readBody(req);
      await conn.write(OK);
    }
  });
  await withPeer(server, async (client) => {
    const headers = new Headers({ "content-length": "100000" });
    const ok = await send(client, server.url, {
      method: "PUT",
      headers,
      body: patternStream(100000, 7000),
    });
    assertEquals(await ok.text(), "ok");
    assertEquals(received, ["100000:undefined"]);
    await rejectsWith(
      send(client, server.url, { method: "PUT", headers, body: patternStream(99999) }),
      /ended after 99999 of 100000 bytes/,
      "body_length",
    );
    await rejectsWith(
      send(client, server.url, { method: "PUT", headers, body: patternStream(100001) }),
      /longer than its content-length 100000/,
      "body_length",
    );
  });
});

Deno.test("raw: a failing request body stream rejects with its own error", async () => {
  const server = answering(() => OK);
  await withPeer(server, async (client) => {
    const broken = new Error("source broke");
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 2) controller.error(broken);
        else controller.enqueue(pattern(1000));
      },
    });
    const error = await assertRejects(() => send(client, server.url, { method: "POST", body }));
    assert(error === broken, `got ${error}`);
  });
});

Deno.test("raw: the body is pulled with backpressure, not read ahead", async () => {
  let written = 0;
  const total = 256 * 1024 * 1024;
  const server = rawServer(async (conn) => {
    if (!(await conn.readRequest())) return;
    await conn.write(`HTTP/1.1 200 OK\r\nContent-Length: ${total}\r\n\r\n`);
    const chunk = pattern(64 * 1024);
    while (written < total && (await conn.write(chunk))) written += chunk.length;
  });
  await withPeer(server, async (client) => {
    const res = await send(client, server.url);
    const reader = res.body!.getReader();
    await reader.read();
    await sleep(300);
    // Only the socket buffers (a few MiB on loopback) may hold what we did not ask for.
    assert(written < 32 * 1024 * 1024, `server wrote ${written} bytes while nobody read`);
    await reader.cancel();
  });
});

Deno.test("raw: aborting while waiting for the head closes the socket", async () => {
  let serverSawClose = false;
  const server = rawServer(async (conn) => {
    if (!(await conn.readRequest())) return;
    serverSawClose = (await conn.readRequest()) === null;
  });
  await withPeer(server, async (client) => {
    const controller = new AbortController();
    const pending = send(client, server.url, { signal: controller.signal });
    await sleep(20);
    controller.abort(new DOMException("gave up", "TimeoutError"));
    const error = await assertRejects(() => pending);
    assert(error instanceof DOMException && error.name === "TimeoutError");
    await eventually(() => serverSawClose, "the server sees the socket closed");
  });
});

Deno.test("raw: idle sockets are closed after idleTimeoutMs", async () => {
  let closedAfter = -1;
  const server = rawServer(async (conn) => {
    if (!(await conn.readRequest())) return;
    await conn.write(OK);
    const started = Date.now();
    if ((await conn.readRequest()) === null) closedAfter = Date.now() - started;
  });
  await withPeer(server, async (client) => {
    await (await send(client, server.url)).text();
    assertEquals(client.idleConnections, 1);
    await sleep(100);
    assertEquals(client.idleConnections, 1);
    await eventually(() => closedAfter !== -1, "the idle socket is closed");
    assertEquals(client.idleConnections, 0);
    // Sweeps run every idleTimeoutMs / 2, so it closes between 1 and 1.5 idleTimeoutMs.
    assert(closedAfter >= 140, `closed after ${closedAfter} ms`);
  }, { idleTimeoutMs: 150 });
});

Deno.test("raw: an idle socket the server closes leaves the pool at once", async () => {
  const server = rawServer(async (conn) => {
    if (!(await conn.readRequest())) return;
    await conn.write(OK);
    await sleep(20);
  });
  await withPeer(server, async (client) => {
    await (await send(client, server.url)).text();
    await eventually(() => client.idleConnections === 0, "the closed socket leaves the pool");
    await (await send(client, server.url)).text();
    assertEquals([client.stats.connects, client.stats.retries], [2, 0]);
  });
});

Deno.test("raw: a server closing idle keep-alive sockets: no request fails", async () => {
  // Closes each socket 0-30 ms after its last answer, racing the client's next request.
  const server = rawServer(async (conn, index) => {
    for (let answered = 0;; answered++) {
      const next = conn.readRequest();
      const wait = (index * 7) % 30;
      // A fresh socket waits for its first request (the client has sent it, however slowly it
      // arrives on a busy machine); only an idle kept-alive one is closed after `wait`.
      const req = answered === 0
        ? await next
        : await Promise.race([next, sleep(wait).then(() => "timeout" as const)]);
      if (req === "timeout" || req === null) return;
      await conn.readBody(req);
      await conn.write(OK);
    }
  });
  await withPeer(server, async (client) => {
    for (let i = 0; i < 200; i++) {
      const method = i % 3 === 0 ? "POST" : "GET";
      const body = method === "POST" ? new TextEncoder().encode(`n=${i}`) : null;
      assertEquals(await (await send(client, server.url, { method, body })).text(), "ok");
      await sleep(i % 25);
    }
  });
});

Deno.test("raw: a reused socket closed before answering is retried once on a fresh one", async () => {
  // Every socket answers one request, then reads the next and closes without a word: the race
  // nginx creates when keepalive_timeout or keepalive_requests ends a socket.
  const server = rawServer(async (conn) => {
    const first = await conn.readRequest();
    if (!first) return;
    await conn.readBody(first);
    await conn.write(OK);
    await conn.readRequest();
  });
  await withPeer(server, async (client) => {
    for (let i = 0; i < 20; i++) {
      const body = i % 2 ? pattern(100) : null;
      const method = body ? "PUT" : "GET";
      assertEquals(await (await send(client, server.url, { method, body })).text(), "ok");
    }
    assertEquals(client.stats.retries, 19);
    // A stream body cannot be replayed: that failure is reported, not retried.
    await rejectsWith(
      send(client, server.url, { method: "POST", body: patternStream(10) }),
      /closed before any response byte/,
      "connection_closed",
    );
    assertEquals(client.stats.retries, 19);
  });
});

Deno.test("raw: a fresh socket closed before answering is not retried", async () => {
  const server = rawServer(async (conn) => {
    await conn.readRequest();
  });
  await withPeer(server, async (client) => {
    await rejectsWith(
      send(client, server.url),
      /closed before any response byte/,
      "connection_closed",
    );
    assertEquals([server.accepted, client.stats.retries], [1, 0]);
  });
});

Deno.test("raw: a 20 MiB length-delimited body streams intact", async () => {
  const size = 20 * 1024 * 1024;
  const server = rawServer(async (conn) => {
    if (!(await conn.readRequest())) return;
    await conn.write(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`);
    for (let sent = 0; sent < size; sent += 100_000) {
      const n = Math.min(100_000, size - sent);
      const chunk = new Uint8Array(n);
      for (let i = 0; i < n; i++) chunk[i] = (sent + i) & 0xff;
      if (!(await conn.write(chunk))) return;
    }
  });
  await withPeer(server, async (client) => {
    const { bytes, chunks, ok } = await drain((await send(client, server.url)).body);
    assertEquals(bytes, size);
    assert(ok && chunks > 100, `${chunks} chunks, bytes ok: ${ok}`);
  });
});
