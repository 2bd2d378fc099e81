/**
 * The door to the runtime's internals (shared/net/deno_internals.ts) and the guard's fallback.
 * The runtime's per-connection HTTP server passes its start-up self-test (a cancel closes the
 * connection) in a few milliseconds; a door that is gone, changed its arity or whose cancel does
 * not close fails it, with a warning. Forced into the fallback (every connection relayed to a
 * loopback Deno.serve), the guarded listener still serves (keep-alive, the client's real address,
 * TLS) and its limits still hold: the header timeout of a trickled head, the idle timeout of a
 * stalled upload, and a graceful shutdown that a stalled upload does not hold. Over TLS, with or
 * without the fallback, the relayed bytes of a trickled head do not hold off the header timeout.
 * The guard's deadlines run on a ManualClock that each test moves: nothing waits them out.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { makeSelfSignedCert } from "./certs.ts";
import { clientOf, guardedServe, type GuardOptions, probeRuntimeHttp } from "../shared/net/mod.ts";
import { checkedRuntimeHttp, internalServeOnConnection } from "../shared/net/deno_internals.ts";
import { ManualClock } from "../shared/clock.ts";
import { curl, makeTestCa, removeDir, requirePeer, tempDir } from "./support/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
/** The fallback, forced: a door that reports the runtime's server missing. */
const RELAY = { runtimeHttp: Promise.resolve(undefined) };
/** Long timeouts on a manual clock: the real time a test takes is far from moving any of them. */
const GUARD: GuardOptions = {
  headerTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  maxConnectionsPerIp: 20,
};
/** The guard's sweep period for {@link GUARD} (a quarter of the shorter timeout, at most 1 s). */
const SWEEP_MS = 1_000;

/** Reads `conn` to its end (or a reset): what came. */
async function readToEnd(conn: Deno.Conn): Promise<string> {
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
  return text;
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
 * Moves `clock` forward one sweep at a time until `ended` settles (then before each step `each`
 * runs: a slowloris's next header line), for up to twice `timeoutMs`. Resolves with the clock
 * time moved when `ended` was seen, or Infinity when the guard never ended it. What settles between
 * two steps is seen at the next one, so the result is at most a few sweeps past the deadline.
 */
async function advanceUntil(
  clock: ManualClock,
  ended: Promise<unknown>,
  timeoutMs: number,
  each?: () => Promise<void>,
): Promise<number> {
  let done = false;
  void ended.then(() => done = true, () => done = true);
  let moved = 0;
  while (!done && moved <= 2 * timeoutMs) {
    await each?.();
    await clock.advance(SWEEP_MS);
    moved += SWEEP_MS;
  }
  // A close made by the last sweep reaches the reader after a few more turns.
  for (let i = 0; !done && i < 50; i++) await new Promise((r) => setTimeout(r, 0));
  return done ? moved : Infinity;
}

/** That `at` (from {@link advanceUntil}) is at `timeoutMs` of the clock, give or take sweeps. */
function assertAtTimeout(at: number, timeoutMs: number, what: string): void {
  assert(at !== Infinity, `${what}: never closed by the guard`);
  // Half: the clock's now() moves with real time too, which may add a few seconds under load.
  assert(at >= timeoutMs / 2, `${what}: closed after ${at} ms of ${timeoutMs}`);
  assert(at <= timeoutMs + 5 * SWEEP_MS, `${what}: closed only after ${at} ms of ${timeoutMs}`);
}

/**
 * Slowloris: one header line per sweep, never the blank line, so bytes keep moving (through the
 * relay too) while the clock runs past the header timeout; resolves with the clock time at which
 * the server ended the connection (Infinity: it was kept).
 */
function trickleHead(clock: ManualClock, conn: Deno.Conn, ended: Promise<string>): Promise<number> {
  let i = 0;
  return advanceUntil(clock, ended, GUARD.headerTimeoutMs, async () => {
    await conn.write(enc.encode(`X-${i++}: y\r\n`)).catch(() => {});
  });
}

/**
 * Runs `work` with the timers it sets held: a `setTimeout` made meanwhile is recorded and never
 * fires (its `clearTimeout` is harmless). Resolves with the work's value and the delays it asked
 * for. Work that could end only by one of its timers never ends: a hang guard on the real timers
 * (60 s) ends that, and only that.
 */
async function withTimersHeld<T>(work: () => Promise<T>): Promise<{ value: T; held: number[] }> {
  const realSetTimeout = globalThis.setTimeout;
  const held: number[] = [];
  let next = -1;
  globalThis.setTimeout = ((_fn: unknown, ms?: number) => {
    held.push(ms ?? 0);
    return next--;
  }) as unknown as typeof setTimeout;
  let guard: ReturnType<typeof setTimeout> | undefined;
  try {
    const hang = new Promise<never>((_, reject) => {
      guard = realSetTimeout(
        () => reject(new Error("hang guard (60 s): the work waited on one of its held timers")),
        60_000,
      );
    });
    return { value: await Promise.race([work(), hang]), held };
  } finally {
    globalThis.setTimeout = realSetTimeout;
    clearTimeout(guard);
  }
}

Deno.test("runtime door: the per-connection server passes its self-test in a few milliseconds", async () => {
  // A few milliseconds: the self-test ends on its own exchange (a request, its answer, the cancel
  // and the close), never on one of its timers (its 2 s deadline, its 200 ms wait for the
  // server's end). With those timers held, it still passes: the proof is that no timer had to
  // fire, not a duration a loaded machine could stretch.
  const { value: http, held } = await withTimersHeld(() => probeRuntimeHttp());
  assert(typeof http !== "string", `the self-test failed on the pinned Deno: ${http}`);
  assert(held.includes(2_000), `the self-test's deadline was set (held: ${held})`);
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
  const clock = new ManualClock();
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, clock, ...RELAY },
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
    const at = await advanceUntil(clock, readToEnd(conn), GUARD.idleTimeoutMs);
    assertAtTimeout(at, GUARD.idleTimeoutMs, "an idle keep-alive connection");
    conn.close();
  } finally {
    await server.shutdown(0);
  }
});

Deno.test("guard fallback: a trickled request head is closed at the header timeout", async () => {
  const clock = new ManualClock();
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, clock, ...RELAY },
    () => new Response("never"),
  );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    await conn.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n"));
    const ended = readToEnd(conn);
    const at = await trickleHead(clock, conn, ended);
    if (at === Infinity) conn.close(); // not closed by the server: end the read, and fail below
    assertEquals(await ended, "");
    assertAtTimeout(at, GUARD.headerTimeoutMs, "a slow head that trickled");
    conn.close();
  } finally {
    await server.shutdown(0);
  }
});

/** A server whose handler tracks the upload and answers whether it came whole or was cut. */
function uploadServer(clock: ManualClock, arrived: () => void) {
  return guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, clock, ...RELAY },
    async (req, info) => {
      arrived();
      const body = clientOf(info)!.track(req.body!);
      const bytes = await new Response(body).arrayBuffer().catch(() => null);
      return new Response(bytes === null ? "cut" : "whole");
    },
  );
}

Deno.test("guard fallback: a stalled upload is cut at the idle timeout and its connection closed", async () => {
  const clock = new ManualClock();
  const arrived = Promise.withResolvers<void>();
  const server = uploadServer(clock, arrived.resolve);
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    await conn.write(enc.encode("POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf"));
    await arrived.promise;
    const ended = readToEnd(conn);
    const at = await advanceUntil(clock, ended, GUARD.idleTimeoutMs);
    assertMatch(await ended, /^HTTP\/1\.1 200[^]*\r\ncut\r\n/);
    assertAtTimeout(at, GUARD.idleTimeoutMs, "a stalled upload");
    conn.close();
  } finally {
    await server.shutdown(0);
  }
});

Deno.test("guard fallback: shutdown lets a request in flight finish, and a stalled upload does not hold it", async () => {
  const clock = new ManualClock();
  const started = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: GUARD, clock, ...RELAY },
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
  // The answered connection is closed once its answer has had a sweep to be written.
  assert(await advanceUntil(clock, down, 10 * SWEEP_MS) <= 10 * SWEEP_MS, "shutdown finished");

  const arrived = Promise.withResolvers<void>();
  const stalled = uploadServer(clock, arrived.resolve);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: stalled.addr.port });
  await conn.write(enc.encode("POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf"));
  await arrived.promise;
  // The shutdown waits for no grace: the stalled upload is cut at the idle timeout, and it ends.
  const at = await advanceUntil(clock, stalled.shutdown(), GUARD.idleTimeoutMs);
  assertAtTimeout(at, GUARD.idleTimeoutMs, "the shutdown held by a stalled upload");
  conn.close();
});

Deno.test({
  name: "guard fallback: TLS (h2 and http/1.1 by ALPN) relayed to a loopback Deno.serve over TLS",
  ignore: !requirePeer("guard fallback TLS test", "curl", "curl"),
  fn: async () => {
    const dir = await tempDir("guard-fallback-");
    const cert = await makeSelfSignedCert(dir);
    const clock = new ManualClock();
    const server = guardedServe(
      {
        hostname: "127.0.0.1",
        port: 0,
        guard: GUARD,
        clock,
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
      const at = await advanceUntil(clock, readToEnd(silent), GUARD.headerTimeoutMs);
      assertAtTimeout(at, GUARD.headerTimeoutMs, "a silent handshake");
      silent.close();
    } finally {
      await server.shutdown(0);
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
      const clock = new ManualClock();
      const server = guardedServe(
        { hostname: "127.0.0.1", port: 0, guard: GUARD, clock, tls, ...door },
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
        const at = await trickleHead(clock, conn, ended);
        if (at === Infinity) conn.close(); // not closed by the server: end the read, fail below
        assertEquals(await ended, "", path);
        assertAtTimeout(at, GUARD.headerTimeoutMs, `${path}: a slow head that trickled`);
        conn.close();
      } finally {
        await server.shutdown(0);
      }
    }
  } finally {
    await removeDir(dir);
  }
});
