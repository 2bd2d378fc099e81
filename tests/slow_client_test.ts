/**
 * The connection guard of a data-plane listener (shared/net/guarded_listener.ts) against slow
 * and greedy clients, over raw TCP and TLS: slow request heads and handshakes, connections past
 * the per-address cap, idle keep-alive connections and stalled uploads and downloads are closed;
 * ordinary requests, keep-alive reuse, long transfers that keep moving, h2 and http/1.1 by ALPN
 * and the client's real address (X-Forwarded-For upstream) still work. A body that trickles past
 * body_timeout_secs gets its 408 and then its connection closed (HTTP/1.1) or its stream reset
 * (h2), with a queued backend too.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeSelfSignedCert } from "./certs.ts";
import { ECHO_PIPELINE, startTestGateway, startUpstream } from "./harness.ts";
import { curl, waitFor } from "./support/mod.ts";
import { connectH2c, H2, type H2Frame } from "./support/h2c.ts";

const GUARD = "header_timeout_secs = 1\nidle_timeout_secs = 1.5\nmax_connections_per_ip = 60\n";
const enc = new TextEncoder();

/**
 * True once the server closes `conn` (a read returns end of stream or fails); false when the
 * test gives up first, after `limitMs` (a bound on a hang, well past every timeout of the guard
 * under test, not a window the close must fall in).
 */
async function closedByServer(conn: Deno.Conn, limitMs: number): Promise<boolean> {
  const buf = new Uint8Array(4096);
  let gaveUp = false;
  const deadline = setTimeout(() => {
    gaveUp = true;
    conn.close();
  }, limitMs);
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
    }
  } catch {
    // reset, or closed by the deadline
  } finally {
    clearTimeout(deadline);
  }
  return !gaveUp;
}

Deno.test("connection guard: 50 slow request heads are closed after header_timeout_secs", async () => {
  const gw = await startTestGateway(ECHO_PIPELINE, { network: GUARD });
  try {
    const conns = await Promise.all(
      Array.from({ length: 50 }, () => Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort })),
    );
    let stop = false;
    // Slowloris: a header line every 300 ms, never the blank line.
    const drip = (async () => {
      for (const c of conns) {
        await c.write(enc.encode("GET /echo HTTP/1.1\r\nHost: x\r\n")).catch(() => {});
      }
      for (let i = 0; !stop && i < 20; i++) {
        await new Promise((r) => setTimeout(r, 300));
        for (const c of conns) await c.write(enc.encode(`X-${i}: y\r\n`)).catch(() => {});
      }
    })();
    // The drip would go on for 6 s: only the 1 s header timeout closes them before.
    const closed = await Promise.all(conns.map((c) => closedByServer(c, 5_500)));
    stop = true;
    await drip;
    assertEquals(closed.filter((c) => !c).length, 0, "every slow head is closed by the gateway");
    // The listener still serves.
    const res = await fetch(`${gw.url}/echo/ok`);
    assertEquals(res.status, 200);
    await res.body?.cancel();
  } finally {
    await gw.stop();
  }
});

Deno.test("connection guard: the per-address cap, idle keep-alive connections, and normal traffic", async () => {
  const gw = await startTestGateway(ECHO_PIPELINE, {
    network: "header_timeout_secs = 5\nidle_timeout_secs = 1\nmax_connections_per_ip = 5\n",
  });
  try {
    const buf = new Uint8Array(65536);
    /** One request on `conn`; true when it is answered 200. */
    const served = async (conn: Deno.Conn) => {
      await conn.write(enc.encode("GET /echo/k HTTP/1.1\r\nHost: x\r\n\r\n")).catch(() => {});
      const n = await conn.read(buf).catch(() => null);
      return /^HTTP\/1\.1 200/.test(new TextDecoder().decode(buf.subarray(0, n ?? 0)));
    };
    // Five connections, each answered once (so the gateway holds all five), kept open.
    const held = await Promise.all(
      Array.from({ length: 5 }, () => Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort })),
    );
    for (const c of held) assert(await served(c), "a held connection is served");
    const extra = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
    // Refused: closed without an answer, long before its 5 s header timeout would.
    assertEquals(await served(extra), false, "the sixth connection is refused");
    assert(await closedByServer(extra, 3_000), "the sixth connection is closed");
    for (const c of held) c.close();

    // A keep-alive connection (once the gateway has seen the five go): two requests on it, then
    // silence until the idle timeout closes it.
    let conn: Deno.Conn | undefined;
    await waitFor(async () => {
      const c = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
      if (await served(c)) conn = c;
      else c.close();
      return conn !== undefined;
    }, { timeoutMs: 10_000, description: "a connection under the cap again" });
    assert(await served(conn!), "the second request on the kept-alive connection");
    // Silent now: its idle timeout (1 s) closes it (4 s only bounds a hang).
    assert(await closedByServer(conn!, 4_000), "closed after its idle timeout");
  } finally {
    await gw.stop();
  }
});

Deno.test("connection guard: the upstream sees the client's real address (X-Forwarded-For)", async () => {
  const up = startUpstream((req) => Response.json({ xff: req.headers.get("x-forwarded-for") }));
  const gw = await startTestGateway(apiPipeline(up.url), { network: GUARD });
  try {
    const res = await fetch(`${gw.url}/api/x`);
    assertEquals((await res.json()).xff, "127.0.0.1");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("body timeout: a client that trickles a body the gateway must read gets 408 request_body_timeout", async () => {
  const gw = await startTestGateway(
    ECHO_PIPELINE + "\n[proxy.content_limits]\nbody_timeout_secs = 1\n",
    {
      network: "idle_timeout_secs = 30\n",
    },
  );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
    await conn.write(
      enc.encode(
        "POST /echo/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          "Content-Length: 1000\r\n\r\n{",
      ),
    );
    // One byte every 200 ms: never idle, never done.
    let stop = false;
    const drip = (async () => {
      for (let i = 0; !stop && i < 30; i++) {
        await new Promise((r) => setTimeout(r, 200));
        await conn.write(enc.encode(" ")).catch(() => {});
      }
    })();
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    stop = true;
    const text = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    assertMatch(text, /^HTTP\/1\.1 408/);
    assertMatch(text, /request_body_timeout/);
    await drip;
    conn.close();
  } finally {
    await gw.stop();
  }
});

/** A pipeline from `/api` to the upstream at `url`. */
function apiPipeline(url: string): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[backends.up]
service = "http"
timeout_secs = 30
[backends.up.options]
base_url = "${url}"
[pipelines.api]
endpoints = ["api"]
backends = ["up"]
`;
}

/** A body of `chunks` chunks of `size` bytes, one every `everyMs`. */
function slowBody(
  chunks: number,
  size: number,
  everyMs: number,
  onCancel?: () => void,
): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === chunks) return controller.close();
      if (sent > 0) await new Promise((r) => setTimeout(r, everyMs));
      sent++;
      controller.enqueue(new Uint8Array(size).fill(97));
    },
    cancel: onCancel,
  });
}

Deno.test("connection guard: a download that keeps moving outlives idle_timeout_secs, one the client stops reading is closed", async () => {
  const big = 64 * 1024 * 1024;
  const given = Promise.withResolvers<void>();
  const up = startUpstream((req) => {
    if (new URL(req.url).pathname === "/slow") return new Response(slowBody(10, 1000, 300));
    // 64 MiB, made as fast as it is read: far more than the sockets buffer. Cancelled when the
    // gateway gives the download up.
    return new Response(slowBody(big / 65536, 65536, 0, given.resolve));
  });
  const gw = await startTestGateway(apiPipeline(up.url), {
    network: "header_timeout_secs = 5\nidle_timeout_secs = 1\n",
  });
  try {
    // 10 chunks 300 ms apart: 2.7 s in all, never 1 s without a byte.
    const res = await fetch(`${gw.url}/api/slow`);
    assertEquals((await res.arrayBuffer()).byteLength, 10_000, "all ten chunks, the last 2.7 s on");

    // A client that reads the head and then nothing: the gateway closes it after ~1 s idle.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
    await conn.write(enc.encode("GET /api/big HTTP/1.1\r\nHost: x\r\n\r\n"));
    const first = new Uint8Array(1024);
    await conn.read(first);
    // The client reads nothing more until the gateway has closed the connection and given the
    // upstream's answer up (a bound on a hang, well past the 1 s idle timeout).
    let gaveUp = false;
    const limit = setTimeout(() => {
      gaveUp = true;
      given.resolve();
    }, 10_000);
    await given.promise;
    clearTimeout(limit);
    assert(!gaveUp, "the stalled download was not given up");
    let received = 0;
    const buf = new Uint8Array(1 << 20);
    try {
      while (true) {
        const n = await conn.read(buf);
        if (n === null) break;
        received += n;
      }
    } catch {
      // reset: closed as well
    }
    conn.close();
    assert(received < big / 2, `the stalled download went on (${received} bytes)`);
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("connection guard: an upload that keeps moving outlives idle_timeout_secs, one that stops is closed", async () => {
  const up = startUpstream((_req, body) => Response.json({ bytes: body.byteLength }));
  const gw = await startTestGateway(apiPipeline(up.url), {
    network: "header_timeout_secs = 5\nidle_timeout_secs = 1\n",
  });
  try {
    // A chunked upload of 10 chunks 300 ms apart streams through to the upstream.
    const res = await fetch(`${gw.url}/api/up`, { method: "POST", body: slowBody(10, 1000, 300) });
    assertEquals(res.status, 200);
    assertEquals((await res.json()).bytes, 10_000);

    // Half a declared body, then silence.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
    await conn.write(
      enc.encode(
        "POST /api/up HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n" + "x".repeat(100_000),
      ),
    );
    assert(await closedByServer(conn, 8_000), "a stalled upload is closed by the gateway");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("connection guard: over TLS a slow handshake is closed after header_timeout_secs; h2 and http/1.1 by ALPN", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-guard-tls-" });
  const cert = await makeSelfSignedCert(dir);
  const gw = await startTestGateway(ECHO_PIPELINE, { tls: cert, network: GUARD });
  try {
    // A TCP connection that never says hello, and one whose hello stops half-way.
    const silent = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
    const partial = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
    await partial.write(new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
    const closed = await Promise.all([silent, partial].map((c) => closedByServer(c, 8_000)));
    assertEquals(closed, [true, true], "slow handshakes are closed by the gateway");

    for (const [flag, version] of [["--http2", "2"], ["--http1.1", "1.1"]]) {
      const out = await curl([
        "-sS",
        flag,
        "--cacert",
        cert.certPath,
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{http_version}",
        `${gw.url}/echo/tls`,
      ]);
      assertEquals(out.stdout.trim(), `200 ${version}`);
    }
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/** What a raw client trickling a body saw: the answer's head and when the server closed. */
interface Trickled {
  head: string;
  /** The gateway closed the connection (the test did not have to give up on it). */
  closedByServer: boolean;
}

/**
 * Sends a POST head to `port` (`framing`: its Content-Length or Transfer-Encoding line), then a
 * byte of body every 200 ms until the server closes the connection (or 40 s pass).
 */
async function trickle(port: number, path: string, framing: string): Promise<Trickled> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const chunked = framing.startsWith("Transfer-Encoding");
  await conn.write(enc.encode(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`,
  ));
  let open = true;
  const drip = (async () => {
    for (let i = 0; open && i < 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      await conn.write(enc.encode(chunked ? "1\r\n \r\n" : " ")).catch(() => open = false);
    }
  })();
  const buf = new Uint8Array(4096);
  let text = "";
  let gaveUp = false;
  // The drip goes on for 40 s: a bound on a hang, not a window.
  const deadline = setTimeout(() => {
    gaveUp = true;
    conn.close();
  }, 40_000);
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch {
    // reset: closed as well
  }
  clearTimeout(deadline);
  open = false;
  await drip;
  try {
    conn.close();
  } catch {
    // closed already
  }
  return { head: text, closedByServer: !gaveUp };
}

Deno.test("body timeout: ten clients trickling into a queued backend each get their 408 and are disconnected", async () => {
  const up = startUpstream(() => new Response("delivered"));
  const gw = await startTestGateway(
    `
[endpoints.q]
service = "http"
[endpoints.q.options]
path_prefix = "/q"
[backends.later]
service = "http"
[backends.later.options]
base_url = "${up.url}"
[backends.later.queue]
dir = "{DIR}/queue"
[pipelines.q]
endpoints = ["q"]
backends = ["later"]
[proxy.content_limits]
body_timeout_secs = 1
`,
    // Neither timeout of the guard closes these connections: they keep moving.
    { network: "header_timeout_secs = 30\nidle_timeout_secs = 30\n" },
  );
  try {
    // Small bodies (read whole at once), large ones and chunked ones (streamed to the queue's
    // disk), spread by the kernel over the main thread and the data-plane worker.
    const framings = [
      "Content-Length: 1000",
      "Content-Length: 1000000",
      "Transfer-Encoding: chunked",
    ];
    const seen = await Promise.all(
      Array.from({ length: 10 }, (_, i) => trickle(gw.dataPort, "/q/obs", framings[i % 3])),
    );
    for (const [i, s] of seen.entries()) {
      const what = `client ${i} (${framings[i % 3]})`;
      assertMatch(s.head, /^HTTP\/1\.1 408 /, `${what}: ${s.head}`);
      assertMatch(s.head, /request_body_timeout/, what);
      assertMatch(s.head, /\r\nconnection: close\r\n/i, what);
      // Answered (the 408 above) and disconnected by the gateway while the client still dripped.
      assert(s.closedByServer, `${what}: still connected after its 408`);
    }
    assertEquals(up.received.length, 0, "nothing was queued and delivered");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("body timeout over h2: the 408 resets its stream, and the connection goes on", async () => {
  const gw = await startTestGateway(
    ECHO_PIPELINE + "\n[proxy.content_limits]\nbody_timeout_secs = 1\n",
    { network: "header_timeout_secs = 30\nidle_timeout_secs = 30\n" },
  );
  const h2 = await connectH2c(gw.dataPort);
  try {
    const post = (length?: number): [string, string][] => [
      [":method", "POST"],
      [":scheme", "http"],
      [":path", "/echo/slow"],
      [":authority", "gateway.test"],
      ["content-type", "application/json"],
      ...(length === undefined ? [] : [["content-length", String(length)] as [string, string]]),
    ];
    // Stream 1 declares a small body (read whole at once), stream 3 none (streamed).
    await h2.headers(1, post(1000));
    await h2.headers(3, post());
    const reset = (stream: number) => (f: H2Frame) =>
      f.type === H2.RST_STREAM && f.stream === stream;
    let dripping = true;
    const drip = (async () => {
      for (let i = 0; dripping && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 200));
        for (const stream of [1, 3]) {
          if (h2.frames.some(reset(stream))) continue;
          await h2.data(stream, enc.encode(" ")).catch(() => dripping = false);
        }
      }
    })();
    for (const stream of [1, 3]) {
      const rst = await h2.next(reset(stream));
      assertMatch(h2.text(stream), /request_body_timeout/);
      const answered = h2.frames.find((f) => f.type === H2.DATA && f.stream === stream)!;
      assert(
        rst.at - answered.at < 3_000,
        `stream ${stream} reset ${rst.at - answered.at} ms late`,
      );
      // NO_ERROR: the answer is complete, the client may stop sending (RFC 9113 §8.1).
      assertEquals(new DataView(rst.payload.buffer).getUint32(0), 0);
    }
    dripping = false;
    await drip;
    // The same connection still serves.
    await h2.headers(5, [
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/echo/after"],
      [":authority", "gateway.test"],
    ], true);
    await h2.next((f) => f.type === H2.DATA && f.stream === 5 && (f.flags & 1) === 1);
    assertMatch(h2.text(5), /"\/after"/);
    assert(!h2.frames.some((f) => f.type === H2.GOAWAY), "no GOAWAY");
    assert(!h2.closed, "the connection is open");
  } finally {
    h2.close();
    await gw.stop();
  }
});
