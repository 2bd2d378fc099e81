/**
 * The MLLP listener on its own: messages of a connection handled one at a time in order, a peer
 * that does not read its answers closed at the timeout (`write_timeout`), a silent one closed
 * (`idle_timeout`), a frame too large answered then closed, and max_connections.
 */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { encodeMllpFrame, MllpFrameReader } from "./frame.ts";
import type { MllpCloseReason, MllpHandler } from "./connection.ts";
import { MllpListener } from "./server.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A handler recording what happened; `answer` makes the answers of a message. */
function recorder(answer: (text: string) => Promise<Uint8Array[]>) {
  const messages: string[] = [];
  const closes: { reason: MllpCloseReason; pending: number }[] = [];
  let onClose: () => void = () => {};
  const closed = new Promise<void>((resolve) => (onClose = resolve));
  const handler: MllpHandler = {
    message: (payload) => {
      const text = dec.decode(payload);
      messages.push(text);
      return answer(text);
    },
    framingError: (err) => err.code === "too_large" ? [enc.encode(`AR ${err.code}`)] : [],
    closed: (reason, pending) => {
      closes.push({ reason, pending });
      onClose();
    },
  };
  return { handler, messages, closes, closed };
}

async function listen(handler: MllpHandler, idleMs = 300, maxConnections = 10) {
  return await MllpListener.listen({
    hostname: "127.0.0.1",
    port: 0,
    maxFrameBytes: 1024,
    idleMs,
    maxConnections,
    onConnection: () => handler,
  });
}

/** Reads answer frames from a connection until it closes. */
async function readAll(conn: Deno.Conn): Promise<string[]> {
  const reader = new MllpFrameReader({ maxFrameBytes: 1 << 20 });
  const out: string[] = [];
  const buf = new Uint8Array(4096);
  try {
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      for (const f of reader.push(buf.subarray(0, n))) out.push(dec.decode(f));
    }
  } catch {
    // reset
  }
  return out;
}

Deno.test("messages of one connection are handled one at a time, in order", async () => {
  let running = 0;
  let most = 0;
  const r = recorder(async (text) => {
    running++;
    most = Math.max(most, running);
    // A handler that takes a while (a paced fake, not a wait for anything): were messages handled
    // side by side, the next would start meanwhile. Any pause length shows that; the assertions
    // (order, at most one running) do not depend on it.
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    return [enc.encode(`ACK ${text}`)];
  });
  const listener = await listen(r.handler);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  // Five frames in one write.
  const frames = ["1", "2", "3", "4", "5"].map((m) => encodeMllpFrame(enc.encode(m)));
  const all = new Uint8Array(frames.reduce((n, f) => n + f.byteLength, 0));
  let at = 0;
  for (const f of frames) {
    all.set(f, at);
    at += f.byteLength;
  }
  await conn.write(all);
  await conn.closeWrite();
  assertEquals(await readAll(conn), ["ACK 1", "ACK 2", "ACK 3", "ACK 4", "ACK 5"]);
  assertEquals(most, 1);
  conn.close();
  await r.closed;
  assertEquals(r.closes[0].reason, "peer_closed");
  await listener.close();
});

Deno.test("a peer that never reads its answers is closed at the timeout (write_timeout)", async () => {
  // An answer of 32 MiB does not fit in the socket buffers of a peer that reads nothing.
  const r = recorder(() => Promise.resolve([new Uint8Array(32 * 1024 * 1024)]));
  const listener = await listen(r.handler, 300);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  await conn.write(encodeMllpFrame(enc.encode("MSG")));
  await r.closed;
  assertEquals(r.closes[0].reason, "write_timeout");
  conn.close();
  await listener.close();
});

Deno.test("a silent peer with a frame begun is closed at the idle timeout, naming the bytes", async () => {
  const r = recorder(() => Promise.resolve([]));
  const listener = await listen(r.handler, 200);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  await conn.write(enc.encode("\x0bMSH|^~\\&|A"));
  await r.closed;
  assertEquals(r.closes[0], { reason: "idle_timeout", pending: 10 });
  conn.close();
  await listener.close();
});

Deno.test("a frame too large gets the handler's answer, then the close", async () => {
  const r = recorder(() => Promise.resolve([]));
  const listener = await listen(r.handler);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  const reading = readAll(conn);
  await conn.write(encodeMllpFrame(new Uint8Array(4096).fill(0x41))).catch(() => 0);
  assertEquals(await reading, ["AR too_large"]);
  await r.closed;
  assertEquals(r.closes[0].reason, "framing");
  assertEquals(r.messages, []);
  conn.close();
  await listener.close();
});

Deno.test("connections over maxConnections are closed as they arrive", async () => {
  const r = recorder((text) => Promise.resolve([enc.encode(`ACK ${text}`)]));
  let refused = 0;
  const listener = await MllpListener.listen({
    hostname: "127.0.0.1",
    port: 0,
    maxFrameBytes: 1024,
    idleMs: 5000,
    maxConnections: 1,
    onConnection: () => r.handler,
    onRefused: () => refused++,
  });
  const first = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  await first.write(encodeMllpFrame(enc.encode("A")));
  const firstReader = new MllpFrameReader({ maxFrameBytes: 1024 });
  const buf = new Uint8Array(256);
  const n = await first.read(buf);
  assertEquals(firstReader.push(buf.subarray(0, n!)).map((f) => dec.decode(f)), ["ACK A"]);
  const second = await Deno.connect({ hostname: "127.0.0.1", port: listener.port });
  assertEquals(await readAll(second), []);
  assert(refused === 1, `refused ${refused}`);
  second.close();
  first.close();
  await listener.close();
});
