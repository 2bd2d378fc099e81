/**
 * Our HTTP/3 listener serving the endpoints of `[network.main]`, driven by our own http3 backend
 * and by raw QUIC peers: Alt-Svc, 100 concurrent streams on one connection, 10 MiB each way,
 * peers that stop streams or abandon uploads, a peer that sends garbage, GOAWAY and drain on
 * reload and shutdown, reconnection, and 502 when nothing answers.
 */
import { waitFor, withManagementToken } from "./support/mod.ts";
import { deepEqual, equal, ok } from "node:assert/strict";
import { createHttp3Backend, type Http3Backend } from "../gateway/backends/http3/backend.ts";
import { H3, Http3Client } from "../gateway/http3/mod.ts";
import { startTestGateway, startUpstream, type TestGateway } from "./harness.ts";
import {
  backendConfig,
  buildContext,
  call,
  envelope,
  freeUdpPort,
  type H3Cert,
  makeH3Cert,
  rawPeer,
  sha256,
} from "./http3_support.ts";

const TEN_MIB = 10 * 1024 * 1024;

function pattern(size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + (i >> 12)) & 0xff;
  return out;
}

const DOWNLOAD = pattern(TEN_MIB);

function config(h3Port: number, cert: H3Cert, upstream: number): string {
  return `
[network.main.http3]
bind = "127.0.0.1"
port = ${h3Port}
cert_path = "${cert.certPath}"
key_path = "${cert.keyPath}"

[endpoints.api]
service = "http"
options = { path_prefix = "/api" }

[endpoints.echo]
service = "http"
options = { path_prefix = "/echo" }

[backends.up]
service = "http"
options = { base_url = "http://127.0.0.1:${upstream}" }

[backends.mirror]
service = "echo"

[pipelines.api]
endpoints = ["api"]
backends = ["up"]

[pipelines.echo]
endpoints = ["echo"]
backends = ["mirror"]
`;
}

interface Setup {
  gw: TestGateway;
  cert: H3Cert;
  h3Port: number;
  upstream: ReturnType<typeof startUpstream>;
  concurrency: { now: number; max: number };
  client(): Promise<Http3Client>;
  backend(extra?: Record<string, unknown>): Promise<Http3Backend>;
}

async function setup(): Promise<Setup> {
  const dir = await Deno.makeTempDir({ prefix: "h3-listener-" });
  const cert = await makeH3Cert(dir);
  const concurrency = { now: 0, max: 0 };
  const upstream = startUpstream(async (req, body) => {
    const path = new URL(req.url).pathname;
    if (path.startsWith("/slow")) {
      concurrency.now++;
      concurrency.max = Math.max(concurrency.max, concurrency.now);
      await new Promise((r) => setTimeout(r, 300));
      concurrency.now--;
      return Response.json({ path });
    }
    if (path === "/download") return new Response(DOWNLOAD as BodyInit);
    if (path === "/upload") return new Response(body as BodyInit);
    return Response.json({ path, length: body.length });
  });
  const h3Port = freeUdpPort();
  // The drain test lets a slow request finish on shutdown: the harness's longer grace.
  const gw = await startTestGateway(config(h3Port, cert, upstream.port), { dir, drainSeconds: 2 });
  const connect = () =>
    Http3Client.connect({
      hostname: "127.0.0.1",
      port: h3Port,
      serverName: "localhost",
      caCerts: [cert.cert],
    });
  return {
    gw,
    cert,
    h3Port,
    upstream,
    concurrency,
    client: connect,
    backend: async (extra = {}) =>
      (await createHttp3Backend(
        { ...backendConfig(h3Port, cert.certPath, { base_path: "", ...extra }), name: "gw" },
        buildContext(),
      )) as Http3Backend,
  };
}

/** Resolves once a slow request is at the upstream (in flight through the gateway). */
function slowAtUpstream(s: Setup): Promise<void> {
  return waitFor(() => Promise.resolve(s.concurrency.now > 0), {
    timeoutMs: 10_000,
    intervalMs: 10,
    description: "a slow request at the upstream",
  });
}

async function teardown(s: Setup): Promise<void> {
  await s.gw.stop();
  await s.upstream.stop();
}

const opts = { sanitizeOps: false, sanitizeResources: false };

async function text(res: { body: ReadableStream<Uint8Array> | null }): Promise<string> {
  return await new Response(res.body).text();
}

Deno.test({
  ...opts,
  name: "h3 listener: same endpoints as HTTP/1.1, Alt-Svc, 100 concurrent streams, 10 MiB each way",
  fn: async () => {
    const s = await setup();
    try {
      // The HTTP/1.1 listener advertises the QUIC one.
      const h1 = await fetch(`${s.gw.url}/echo/x`);
      equal(h1.headers.get("alt-svc"), `h3=":${s.h3Port}"; ma=86400`);
      equal((await h1.json()).protocol, "http");
      deepEqual(s.gw.gateway.http3Ports(), { main: s.h3Port });

      const backend = await s.backend();
      try {
        // The echo endpoint over HTTP/3 sees an h3 request.
        const echo = await backend.invoke(envelope("/echo/hello?q=1"), call());
        equal(echo.status, 200);
        const e = JSON.parse(await echo.body.text());
        equal(e.protocol, "h3");
        equal(e.path, "/hello");
        deepEqual(e.query, { q: "1" });

        // 100 concurrent requests on one connection, served concurrently.
        const results = await Promise.all(
          Array.from({ length: 100 }, async (_, i) => {
            const res = await backend.invoke(envelope(`/api/slow/${i}`), call());
            return { status: res.status, body: JSON.parse(await res.body.text()) };
          }),
        );
        for (const [i, r] of results.entries()) {
          equal(r.status, 200);
          equal(r.body.path, `/slow/${i}`);
        }
        deepEqual(backend.connectionsOpened(), { gw: 1 });
        ok(s.concurrency.max >= 50, `upstream saw at most ${s.concurrency.max} at once`);

        // 10 MiB up and back.
        const upload = pattern(TEN_MIB).reverse();
        const up = await backend.invoke(envelope("/api/upload", "POST", upload), call(30_000));
        equal(up.status, 200);
        const echoed = await up.body.bytes();
        equal(echoed.length, TEN_MIB);
        equal(await sha256(echoed), await sha256(upload));

        // 10 MiB down.
        const down = await backend.invoke(envelope("/api/download"), call(30_000));
        const got = await down.body.bytes();
        equal(got.length, TEN_MIB);
        equal(await sha256(got), await sha256(DOWNLOAD));

        // Over the body limit (max_body_size 10 MiB): 413 JSON, as on HTTP/1.1.
        const over = await backend.invoke(
          envelope("/api/upload", "POST", new Uint8Array(TEN_MIB + 1)),
          call(30_000),
        );
        equal(over.status, 413);
        equal(JSON.parse(await over.body.text()).error.code, "payload_too_large");
        deepEqual(backend.connectionsOpened(), { gw: 1 });
      } finally {
        backend.close();
      }
    } finally {
      await teardown(s);
    }
  },
});

Deno.test({
  ...opts,
  name: "h3 listener: peers that stop streams, abandon uploads or send garbage",
  fn: async () => {
    const s = await setup();
    try {
      const client = await s.client();
      // Stop reading a 10 MiB download after the first chunk (STOP_SENDING).
      const big = await client.request({
        method: "GET",
        authority: "localhost",
        path: "/api/download",
      });
      const reader = big.body!.getReader();
      ok((await reader.read()).value!.length > 0);
      await reader.cancel();
      // Abandon an upload half way: the upstream must not get a truncated body as complete.
      const controller = new AbortController();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (sent >= 256 * 1024) {
            controller.abort(new Error("client gave up"));
            await new Promise((r) => setTimeout(r, 100));
            c.close();
            return;
          }
          sent += 64 * 1024;
          c.enqueue(new Uint8Array(64 * 1024));
        },
      });
      const partial = client.request({
        method: "POST",
        authority: "localhost",
        path: "/api/partial",
        body,
        signal: controller.signal,
      });
      await partial.then(() => {}, () => {});
      // Many requests reset at once, then the same connection still serves.
      await Promise.all(Array.from({ length: 20 }, async () => {
        const c = new AbortController();
        const p = client.request({
          method: "GET",
          authority: "localhost",
          path: "/api/slow/x",
          signal: c.signal,
        });
        setTimeout(() => c.abort(), 20);
        await p.then((r) => r.body?.cancel(), () => {});
      }));
      const after = await client.request({
        method: "GET",
        authority: "localhost",
        path: "/echo/a",
      });
      equal(after.status, 200);
      equal(JSON.parse(await text(after)).protocol, "h3");
      equal(client.usable, true);
      // A check that something does not happen (the abandoned body never reaches the upstream):
      // the pause only gives a wrong forward the time to show; no positive outcome rests on it.
      await new Promise((r) => setTimeout(r, 200));
      equal(s.upstream.received.filter((r) => r.url.endsWith("/partial")).length, 0);
      client.close();

      // Garbage on a request stream closes that connection with a protocol error, only it.
      const peer = await rawPeer(s.h3Port, s.cert.cert);
      const st = await peer.conn.createBidirectionalStream();
      const w = st.writable.getWriter();
      await w.write(crypto.getRandomValues(new Uint8Array(512)).map((b) => b | 0x80));
      await w.close();
      const code = await peer.closeCode();
      ok(code >= 0x100 && code <= 0x202, `closed with 0x${code.toString(16)}`);
      // Garbage on the control stream: no SETTINGS first.
      const peer2 = await rawPeer(s.h3Port, s.cert.cert);
      await peer2.uni(Uint8Array.of(0x00, 0x01, 0x05, 1, 2, 3, 4, 5));
      equal(await peer2.closeCode(), H3.MISSING_SETTINGS);
      // The listener goes on.
      const fresh = await s.client();
      const ok2 = await fresh.request({ method: "GET", authority: "localhost", path: "/echo/b" });
      equal(ok2.status, 200);
      await ok2.body?.cancel();
      fresh.close();
    } finally {
      await teardown(s);
    }
  },
});

Deno.test({
  ...opts,
  name: "h3 listener: GOAWAY and drain on reload and shutdown; the backend reconnects",
  fn: async () => {
    const s = await setup();
    let stopped = false;
    try {
      const backend = await s.backend();
      const first = await backend.invoke(envelope("/echo/1"), call());
      equal(first.status, 200);
      await first.body.text();
      const client = await s.client();
      // A slow request is in flight when the certificate changes.
      const slow = client.request({ method: "GET", authority: "localhost", path: "/api/slow/r" });
      await slowAtUpstream(s);
      const cert2 = await makeH3Cert(s.gw.dir, "h3b");
      await s.gw.writeConfig(config(s.h3Port, cert2, s.upstream.port));
      const reload =
        await (await fetch(`${s.gw.mgmt}/api/reload`, withManagementToken({ method: "POST" })))
          .json();
      equal(reload.ok, true);
      // The old connection got GOAWAY: no new requests on it, the one in flight completes.
      const res = await slow;
      equal(res.status, 200);
      equal(JSON.parse(await text(res)).path, "/slow/r");
      equal(client.usable, false);
      equal(client.session.goawayReceived, 4);
      // New connections get the new certificate (the old one is no longer trusted by this client).
      const renewed = await Http3Client.connect({
        hostname: "127.0.0.1",
        port: s.h3Port,
        serverName: "localhost",
        caCerts: [cert2.cert],
      });
      const r2 = await renewed.request({ method: "GET", authority: "localhost", path: "/echo/2" });
      equal(r2.status, 200);
      await r2.body?.cancel();
      renewed.close();
      client.close();

      // The backend's pooled connection was sent GOAWAY too: it reconnects (with cert2 trusted).
      backend.close();
      const backend2 = await createHttp3Backend(
        { ...backendConfig(s.h3Port, cert2.certPath, { base_path: "" }), name: "gw" },
        buildContext(),
      ) as Http3Backend;
      const again = await backend2.invoke(envelope("/echo/3"), call());
      equal(again.status, 200);
      await again.body.text();
      // Drain on shutdown: a request in flight completes.
      const inFlight = backend2.invoke(envelope("/api/slow/s"), call());
      await slowAtUpstream(s);
      const stopping = s.gw.stop();
      stopped = true;
      const last = await inFlight;
      equal(last.status, 200);
      equal(JSON.parse(await last.body.text()).path, "/slow/s");
      await stopping;
      // After shutdown the backend cannot connect: 502 JSON once the handshake gives up.
      const gone = await backend2.invoke(envelope("/echo/4"), call()).catch((e) => e);
      equal(gone.status, 502);
      equal(gone.code, "backend_unavailable");
      backend2.close();
    } finally {
      if (!stopped) await s.gw.stop();
      await s.upstream.stop();
    }
  },
});
