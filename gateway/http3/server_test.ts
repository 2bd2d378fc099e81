import { equal } from "node:assert/strict";
import {
  FRAME,
  frame,
  type H3Cert,
  makeH3Cert,
  rawPeer,
  STREAM_TYPE,
} from "../../tests/http3_support.ts";
import { Http3Client } from "./client.ts";
import { H3 } from "./errors.ts";
import { encodeFieldSection } from "./qpack_encoder.ts";
import { Http3Server } from "./server.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function withServer(fn: (server: Http3Server, cert: H3Cert) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "h3-server-" });
  const cert = await makeH3Cert(dir);
  const errors: string[] = [];
  const server = new Http3Server({
    hostname: "127.0.0.1",
    port: 0,
    cert: cert.cert,
    key: cert.key,
    handler: async (req) => {
      const body = req.body ? await req.text() : "";
      return Response.json({ method: req.method, path: new URL(req.url).pathname, body });
    },
    onError: (err, where) => errors.push(`${where}: ${(err as Error).message}`),
  });
  try {
    await fn(server, cert);
  } finally {
    await server.shutdown(200);
    await Deno.remove(dir, { recursive: true });
  }
}

async function get(server: Http3Server, cert: H3Cert, path: string): Promise<string> {
  const client = await Http3Client.connect({
    hostname: "127.0.0.1",
    port: server.addr.port,
    serverName: "localhost",
    caCerts: [cert.cert],
  });
  try {
    const res = await client.request({ method: "GET", authority: "localhost", path });
    return `${res.status} ${await new Response(res.body).text()}`;
  } finally {
    client.close();
  }
}

const request = (path: string) =>
  frame(
    FRAME.HEADERS,
    encodeFieldSection([
      [":method", "GET"],
      [":scheme", "https"],
      [":authority", "localhost"],
      [":path", path],
    ]),
  );

async function expectClose(
  server: Http3Server,
  cert: H3Cert,
  send: (peer: Awaited<ReturnType<typeof rawPeer>>) => Promise<unknown>,
  code: number,
) {
  const peer = await rawPeer(server.addr.port, cert.cert);
  await send(peer);
  equal((await peer.closeCode()).toString(16), code.toString(16));
  // The server is still serving other connections.
  equal(await get(server, cert, "/after"), '200 {"method":"GET","path":"/after","body":""}');
}

Deno.test({
  ...opts,
  name: "h3 server: control stream errors close the connection with their codes",
  fn: () =>
    withServer(async (server, cert) => {
      // The first frame of a control stream must be SETTINGS.
      await expectClose(server, cert, (p) =>
        p.uni(Uint8Array.of(STREAM_TYPE.CONTROL, ...frame(FRAME.DATA, [1]))), H3.MISSING_SETTINGS);
      // A second control stream.
      await expectClose(server, cert, async (p) => {
        await p.control();
        await p.control();
      }, H3.STREAM_CREATION_ERROR);
      // Closing the control stream.
      await expectClose(server, cert, async (p) => {
        const w = await p.control();
        await w.close();
      }, H3.CLOSED_CRITICAL_STREAM);
      // A second SETTINGS frame, and an HTTP/2 frame type (PRIORITY, 0x02).
      await expectClose(server, cert, async (p) => {
        const w = await p.control();
        await w.write(frame(FRAME.SETTINGS, []));
      }, H3.FRAME_UNEXPECTED);
      await expectClose(server, cert, async (p) => {
        const w = await p.control();
        await w.write(frame(0x02, [0]));
      }, H3.FRAME_UNEXPECTED);
      // HTTP/2 setting identifier in SETTINGS.
      await expectClose(
        server,
        cert,
        (p) =>
          p.uni(Uint8Array.of(STREAM_TYPE.CONTROL, ...frame(FRAME.SETTINGS, [0x02, 0x00]))),
        H3.SETTINGS_ERROR,
      );
      // A push stream from a client.
      await expectClose(server, cert, (p) =>
        p.uni(Uint8Array.of(STREAM_TYPE.PUSH, 0)), H3.STREAM_CREATION_ERROR);
      // QPACK: an insertion into a table of capacity 0.
      await expectClose(
        server,
        cert,
        (p) =>
          p.uni(Uint8Array.of(STREAM_TYPE.QPACK_ENCODER, 0x3f, 0xbd, 0x01)),
        H3.QPACK_ENCODER_STREAM_ERROR,
      );
      // QPACK: an Insert Count Increment on the decoder stream.
      await expectClose(server, cert, (p) =>
        p.uni(Uint8Array.of(STREAM_TYPE.QPACK_DECODER, 0x01)), H3.QPACK_DECODER_STREAM_ERROR);
    }),
});

Deno.test({
  ...opts,
  name: "h3 server: request stream errors and ignored unknown types",
  fn: () =>
    withServer(async (server, cert) => {
      const bidi = async (p: Awaited<ReturnType<typeof rawPeer>>, bytes: Uint8Array) => {
        await p.control();
        const s = await p.conn.createBidirectionalStream();
        const w = s.writable.getWriter();
        await w.write(bytes);
        await w.close();
        return s;
      };
      // DATA before HEADERS.
      await expectClose(
        server,
        cert,
        (p) => bidi(p, frame(FRAME.DATA, [1, 2])),
        H3.FRAME_UNEXPECTED,
      );
      // A field section referencing the dynamic table we said has capacity 0.
      await expectClose(
        server,
        cert,
        (p) => bidi(p, frame(FRAME.HEADERS, [0x02, 0x00, 0x80])),
        H3.QPACK_DECOMPRESSION_FAILED,
      );
      // A frame cut short by the end of the stream.
      await expectClose(
        server,
        cert,
        (p) => bidi(p, Uint8Array.of(...request("/x"), 0x00, 0x10, 1, 2)),
        H3.FRAME_ERROR,
      );
      // Garbage: a reserved frame type with a length beyond the stream.
      await expectClose(
        server,
        cert,
        (p) => bidi(p, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff)),
        H3.FRAME_ERROR,
      );

      // Unknown stream types and frame types are skipped; the request is served.
      const p = await rawPeer(server.addr.port, cert.cert);
      await p.uni(Uint8Array.of(0x21, 1, 2, 3)); // reserved stream type
      await p.uni(Uint8Array.of(0x54, 9, 9)); // unknown stream type
      const s = await bidi(
        p,
        Uint8Array.of(...frame(0x21, [7, 7]), ...request("/ok"), ...frame(0x5e, [1])),
      );
      const text = new TextDecoder().decode(
        new Uint8Array(await new Response(s.readable).arrayBuffer()),
      );
      equal(text.includes('{"method":"GET","path":"/ok","body":""}'), true, text);
      p.conn.close({ closeCode: 0x100, reason: "" });
    }),
});

Deno.test({
  ...opts,
  name: "h3 server: a malformed request gets 400, an oversized header section 431",
  fn: () =>
    withServer(async (server, cert) => {
      const client = await Http3Client.connect({
        hostname: "127.0.0.1",
        port: server.addr.port,
        serverName: "localhost",
        caCerts: [cert.cert],
      });
      try {
        const big = await client.request({
          method: "GET",
          authority: "localhost",
          path: "/",
          headers: new Headers({ "x-big": "a".repeat(70_000) }),
        });
        equal(big.status, 431);
        await big.body?.cancel();
        equal(client.usable, true);
      } finally {
        client.close();
      }
      // No :authority nor Host: malformed, answered 400 on the stream, the connection stays.
      const p = await rawPeer(server.addr.port, cert.cert);
      await p.control();
      const s = await p.conn.createBidirectionalStream();
      const w = s.writable.getWriter();
      await w.write(frame(
        FRAME.HEADERS,
        encodeFieldSection([[":method", "GET"], [":scheme", "https"], [":path", "/"]]),
      ));
      await w.close();
      const bytes = new Uint8Array(await new Response(s.readable).arrayBuffer());
      const text = new TextDecoder().decode(bytes);
      equal(text.includes("malformed_request"), true, text);
      equal(text.includes(":authority"), true, text);
      p.conn.close({ closeCode: 0x100, reason: "" });
    }),
});
