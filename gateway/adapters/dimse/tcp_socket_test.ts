/** TcpSocket: ordered writes (corked or not), reused read buffer, timeout, close and errors. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { TcpSocket } from "./tcp_socket.ts";

/** A loopback listener whose first connection is wrapped in a TcpSocket. */
async function pair(): Promise<{ server: TcpSocket; client: TcpSocket; close(): void }> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const client = TcpSocket.connect("127.0.0.1", (listener.addr as Deno.NetAddr).port);
  const connected = new Promise((resolve) => client.once("connect", resolve));
  const server = new TcpSocket(await listener.accept());
  await connected;
  listener.close();
  return {
    server,
    client,
    close() {
      server.destroy();
      client.destroy();
    },
  };
}

/** Collect what `socket` receives (copied: chunks are views of a reused buffer) until `n` bytes. */
function receive(socket: TcpSocket, n: number): Promise<{ bytes: Uint8Array; buffers: number }> {
  const out = new Uint8Array(n);
  const buffers = new Set<ArrayBufferLike>();
  let at = 0;
  return new Promise((resolve) => {
    socket.on("data", (chunk: Uint8Array) => {
      buffers.add(chunk.buffer);
      out.set(chunk, at);
      at += chunk.byteLength;
      if (at === n) resolve({ bytes: out, buffers: buffers.size });
    });
  });
}

const bytes = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

Deno.test("TcpSocket: writes arrive in order; reads reuse one buffer", async () => {
  const { server, client, close } = await pair();
  try {
    const pieces = [bytes(12, 1), bytes(300_000, 2), bytes(5, 3), bytes(70_000, 4), bytes(1, 5)];
    const total = pieces.reduce((n, p) => n + p.byteLength, 0);
    const got = receive(server, total);
    client.setNoDelay(true);
    client.write(pieces[0]);
    client.cork();
    for (const p of pieces.slice(1)) client.write(p);
    client.uncork();
    const { bytes: received, buffers } = await got;
    const expected = new Uint8Array(total);
    let at = 0;
    for (const p of pieces) {
      expected.set(p, at);
      at += p.byteLength;
    }
    assertEquals(received, expected);
    assertEquals(buffers, 1);
  } finally {
    close();
  }
});

Deno.test("TcpSocket: an idle connection times out; a peer closing is one 'close'", async () => {
  const { server, client, close } = await pair();
  try {
    const timedOut = new Promise((resolve) => server.once("timeout", resolve));
    server.setTimeout(50);
    await timedOut;
    let closes = 0;
    const closed = new Promise((resolve) => server.on("close", () => resolve(++closes)));
    client.destroy();
    await closed;
    server.destroy();
    await new Promise((r) => setTimeout(r, 0));
    assertEquals([closes, server.destroyed, server.write(bytes(1, 0))], [1, true, false]);
  } finally {
    close();
  }
});

Deno.test("TcpSocket: bytes arriving keep the idle timeout off; it counts from the last", async () => {
  const { server, client, close } = await pair();
  try {
    let timeouts = 0;
    server.on("timeout", () => timeouts++);
    const received = () => new Promise((resolve) => server.once("data", resolve));
    server.setTimeout(500);
    // Bytes for twice the timeout, each awaited on arrival: never idle for 500 ms (a margin for
    // a loaded machine's stalls: timers never fire early, only late).
    const started = Date.now();
    let sent = started;
    while (Date.now() - started < 1000) {
      const arrived = received();
      sent = Date.now();
      client.write(bytes(1, 7));
      await arrived;
    }
    assertEquals(timeouts, 0);
    await new Promise((resolve) => server.once("timeout", resolve));
    // Counted from the last bytes' arrival, which is after they were sent (1 ms of rounding).
    assert(Date.now() - sent >= 499, "timed out before 500 ms without bytes");
    assertEquals(timeouts, 1);
  } finally {
    close();
  }
});

Deno.test("TcpSocket: a refused connection is 'error' then 'close'", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const socket = TcpSocket.connect("127.0.0.1", port);
  const events: string[] = [];
  const closed = new Promise<void>((resolve) => {
    socket.on("error", (err: Error) => events.push(`error:${err.name}`));
    socket.on("close", () => {
      events.push("close");
      resolve();
    });
  });
  await closed;
  assertEquals(events, ["error:ConnectionRefused", "close"]);
  assert(socket.destroyed);
});
