/**
 * The door to the runtime's internals (shared/net/deno_internals.ts) and the guard's fallback.
 * The runtime's per-connection HTTP server passes its start-up self-test (a cancel closes the
 * connection) in a few milliseconds; a door that is gone, changed its arity or whose cancel does
 * not close fails it, with a warning. Forced into the fallback (every connection relayed to a
 * loopback Deno.serve), the guarded listener still serves (keep-alive, the client's real address,
 * TLS) and its limits still hold: the header timeout of a trickled head, the idle timeout of a
 * stalled upload, and a graceful shutdown that a stalled upload does not hold. Over TLS, with or
 * without the fallback, the relayed bytes of a trickled head do not hold off the header timeout.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeSelfSignedCert } from "./certs.ts";
import { clientOf, guardedServe, type GuardOptions, probeRuntimeHttp } from "../shared/net/mod.ts";
import { checkedRuntimeHttp, internalServeOnConnection } from "../shared/net/deno_internals.ts";
import { curl, makeTestCa, removeDir, requirePeer, tempDir } from "./support/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
/** The fallback, forced: a door that reports the runtime's server missing. */
const RELAY = { runtimeHttp: Promise.resolve(undefined) };
const GUARD: GuardOptions = { headerTimeoutMs: 600, idleTimeoutMs: 600, maxConnectionsPerIp: 20 };

/** Reads `conn` to its end (or a reset): what came, and when it ended (`performance.now()`). */
async function readToEnd(conn: Deno.Conn): Promise<{ text: string; at: number }> {
  const buf = new Uint8Array(4096);
  let text = "";
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += dec.decode(buf.subarray(0, n));
    }
  } catch {
    // reset: ended as well
  }
  return { text, at: performance.now() };
}

/** Reads answers from `conn` until `count` status lines have come. */
async function readAnswers(conn: Deno.Conn, count: number): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  while ((text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length < count) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += dec.decode(buf.subarray(0, n));
  }
  return text;
}

/**
 * Slowloris: one header line per sixth of the header timeout, never the blank line, so bytes keep
 * moving (through the relay too) for up to eight header timeouts. The pacing is the attacker's
 * behaviour under test, not a wait: the guard's deadlines run on the real clock. True when the
 * connection was still open after the last line (the guard did not close it); false as soon as
 * the server ended it, the event the caller asserts.
 */
async function trickleHead(
  conn: Deno.Conn,
  ended: Promise<{ text: string; at: number }>,
): Promise<boolean> {
  let open = true;
  void ended.then(() => open = false);
  const pace = GUARD.headerTimeoutMs! / 6;
  for (let i = 0; open && i < 48; i++) {
    await new Promise((r) => setTimeout(r, pace));
    await conn.write(enc.encode(`X-${i}: y\r\n`)).catch(() => open = false);
  }
  return open;
}

Deno.test("runtime door: the per-connection server passes its self-test in a few milliseconds", async () => {
  const started = performance.now();
  const http = await probeRuntimeHttp();
  const took = performance.now() - started;
  assert(typeof http !== "string", `the self-test failed on the pinned Deno: ${http}`);
  assert(took < 1_000, `the self-test took ${took.toFixed(1)} ms`);
  // What the guard checks once per isolate warns nothing on the pinned Deno.
  const warnings: string[] = [];
  assert(await checkedRuntimeHttp(undefined, (w) => warnings.push(w)) !== undefined);
  assertEquals(warnings, []);
});

Deno.test("runtime door: a door that is gone, changed, or whose cancel does not close fails its self-test", async () => {
  const real = internalServeOnConnection() as (...args: unknown[]) => unknown;
  const warnings: string[] = [];
  assertEquals(await checkedRuntimeHttp(null, (w) => warnings.push(w)), undefined);
  assertEquals(await checkedRuntimeHttp(() => {}, (w) => warnings.push(w)), undefined);
  assertEquals(warnings.length, 2);
  assertMatch(warnings[0], /serveHttpOnConnection is gone.*relaying each connection/);
  assertMatch(warnings[1], /takes 0 arguments, not 5/);
  // A server whose registered cancel does nothing: the connection stays open after it.
  const deaf = (
    conn: unknown,
    signal: AbortSignal,
    handler: unknown,
    onError: unknown,
    onListen: unknown,
  ) => {
    signal.addEventListener("abort", () => {});
    return real(conn, undefined, handler, onError, onListen);
  };
  assertMatch(String(await probeRuntimeHttp(deaf, 300)), /no answer or no close within 300 ms/);
  // One that answers nothing.
  const mute = (_c: unknown, _s: unknown, _h: unknown, _e: unknown, _l: unknown) => ({
    finished: new Promise(() => {}),
    shutdown: () => Promise.resolve(),
  });
  assertMatch(String(await probeRuntimeHttp(mute, 300)), /no answer or no close within 300 ms/);
});

Deno.test("guard fallback: requests, keep-alive and the client's address through the relay", async () => {
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, ...RELAY },
    (_req, info) => new Response(`${info.remoteAddr.hostname}:${info.remoteAddr.port}`),
  );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    const twice = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n";
    await conn.write(enc.encode(twice));
    const text = await readAnswers(conn, 2);
    const own = `127.0.0.1:${(conn.localAddr as Deno.NetAddr).port}`;
    assertEquals(text.split(own).length - 1, 2, text);
    // The keep-alive connection, silent after its answers, is closed at the idle timeout.
    const idle = performance.now();
    const { at } = await readToEnd(conn);
    assert(at - idle < 3_000, `an idle connection was kept ${(at - idle).toFixed(0)} ms`);
    conn.close();
  } finally {
    await server.shutdown();
  }
});

Deno.test("guard fallback: a trickled request head is closed at the header timeout", async () => {
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, ...RELAY },
    () => new Response("never"),
  );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    await conn.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n"));
    const ended = readToEnd(conn);
    const kept = await trickleHead(conn, ended);
    if (kept) conn.close(); // not closed by the server: end the read, and fail below
    const { text } = await ended;
    assertEquals(text, "");
    assert(!kept, "a slow head was kept while it trickled");
    if (!kept) conn.close();
  } finally {
    await server.shutdown();
  }
});

/** A server whose handler tracks the upload and answers whether it came whole or was cut. */
function uploadServer(arrived: () => void) {
  return guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, ...RELAY },
    async (req, info) => {
      arrived();
      const body = clientOf(info)!.track(req.body!);
      const bytes = await new Response(body).arrayBuffer().catch(() => null);
      return new Response(bytes === null ? "cut" : "whole");
    },
  );
}

Deno.test("guard fallback: a stalled upload is cut at the idle timeout and its connection closed", async () => {
  const arrived = Promise.withResolvers<void>();
  const server = uploadServer(arrived.resolve);
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    await conn.write(enc.encode("POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf"));
    await arrived.promise;
    const stalled = performance.now();
    const { text, at } = await readToEnd(conn);
    assertMatch(text, /^HTTP\/1\.1 200[^]*\r\ncut\r\n/);
    assert(at - stalled < 4_000, `a stalled upload was kept ${(at - stalled).toFixed(0)} ms`);
    conn.close();
  } finally {
    await server.shutdown();
  }
});

Deno.test("guard fallback: shutdown lets a request in flight finish, and a stalled upload does not hold it", async () => {
  const started = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, ...RELAY },
    async () => {
      started.resolve();
      await release.promise;
      return new Response("done");
    },
  );
  const answer = fetch(`http://127.0.0.1:${server.addr.port}/slow`).then((r) => r.text());
  await started.promise;
  let released = false;
  const down = server.shutdown().then(() => assert(released, "shutdown waited for the answer"));
  released = true;
  release.resolve();
  assertEquals(await answer, "done");
  await down;

  const arrived = Promise.withResolvers<void>();
  const stalled = uploadServer(arrived.resolve);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: stalled.addr.port });
  await conn.write(enc.encode("POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf"));
  await arrived.promise;
  const shutdownStarted = performance.now();
  await stalled.shutdown();
  const took = performance.now() - shutdownStarted;
  assert(took < 4_000, `a stalled upload held the shutdown ${took.toFixed(0)} ms`);
  conn.close();
});

Deno.test({
  name: "guard fallback: TLS (h2 and http/1.1 by ALPN) relayed to a loopback Deno.serve over TLS",
  ignore: !requirePeer("guard fallback TLS test", "curl", "curl"),
  fn: async () => {
    const dir = await tempDir("guard-fallback-");
    const cert = await makeSelfSignedCert(dir);
    const server = guardedServe(
      {
        hostname: "127.0.0.1",
        port: 0,
        guard: GUARD,
        tls: { cert: cert.cert, key: await Deno.readTextFile(cert.keyPath) },
        ...RELAY,
      },
      (_req, info) => new Response(`hello ${info.remoteAddr.hostname}`),
    );
    try {
      for (const [flag, version] of [["--http2", "2"], ["--http1.1", "1.1"]]) {
        const out = await curl([
          "-sS",
          flag,
          "--cacert",
          cert.certPath,
          "-w",
          " %{http_code} %{http_version}",
          `https://localhost:${server.addr.port}/`,
        ]);
        assertEquals(out.stdout.trim(), `hello 127.0.0.1 200 ${version}`);
      }
      // A connection that never says hello is closed at the header timeout.
      const silent = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
      const started = performance.now();
      const { at } = await readToEnd(silent);
      assert(at - started < 3_000, `a silent handshake was kept ${(at - started).toFixed(0)} ms`);
      silent.close();
    } finally {
      await server.shutdown();
      await removeDir(dir);
    }
  },
});

Deno.test("connection guard over TLS, direct and through the fallback: a head trickled after the handshake is closed at the header timeout", async () => {
  const dir = await tempDir("guard-tls-");
  try {
    const ca = await makeTestCa(dir);
    const cert = await ca.server("server");
    const caCerts = [await Deno.readTextFile(ca.certPath)];
    const tls = { cert: cert.cert, key: await Deno.readTextFile(cert.keyPath) };
    for (const [path, door] of [["direct", {}], ["fallback", RELAY]] as const) {
      const server = guardedServe(
        { hostname: "127.0.0.1", port: 0, guard: GUARD, tls, ...door },
        () => new Response("never"),
      );
      try {
        const conn = await Deno.connectTls({
          hostname: "localhost",
          port: server.addr.port,
          caCerts,
        });
        await conn.handshake();
        await conn.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n"));
        const ended = readToEnd(conn);
        const kept = await trickleHead(conn, ended);
        if (kept) conn.close(); // not closed by the server: end the read, and fail below
        const { text } = await ended;
        assertEquals(text, "", path);
        assert(!kept, `${path}: a slow head was kept while it trickled`);
        if (!kept) conn.close();
      } finally {
        await server.shutdown();
      }
    }
  } finally {
    await removeDir(dir);
  }
});
