/** The hl7 backend's connection pool: its limit, the order of waiters, and connections that die. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { waitFor } from "../../../tests/support/wait.ts";
import { ConnectionPool } from "./pool.ts";

/** A TCP server that accepts and holds connections (closing them on demand). */
function holdingServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  void (async () => {
    for await (const conn of listener) conns.push(conn);
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    conns,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // closed already
        }
      }
    },
  };
}

function pool(port: number, size: number, idleMs = 60_000) {
  return new ConnectionPool(
    { hostname: "127.0.0.1", port, timeoutMs: 5000, maxFrameBytes: 1 << 20 },
    { size, idleMs, messagesPerConnection: 0 },
  );
}

Deno.test("hl7 pool: at most size connections; waiters served in the order they asked, on the connection given back", async () => {
  const server = holdingServer();
  const p = pool(server.port, 2);
  const signal = new AbortController().signal;
  try {
    const a = await p.acquire(signal);
    const b = await p.acquire(signal);
    const order: string[] = [];
    const waiting = ["c", "d", "e"].map((name) =>
      p.acquire(signal).then((lease) => {
        order.push(name);
        return lease;
      })
    );
    p.release(a.conn, true);
    const c = await waiting[0];
    assertEquals(c.conn, a.conn);
    assert(c.reused);
    p.release(b.conn, true);
    p.release(c.conn, true);
    const [, d, e] = await Promise.all(waiting);
    assertEquals(order, ["c", "d", "e"]);
    assertEquals(p.opened, 2);
    p.release(d.conn, true);
    p.release(e.conn, true);
    assertEquals(p.idle, 2);
  } finally {
    p.close();
    server.close();
  }
});

Deno.test("hl7 pool: a waiter that gives up leaves its turn to the next; a broken connection frees its slot", async () => {
  const server = holdingServer();
  const p = pool(server.port, 1);
  try {
    const a = await p.acquire(new AbortController().signal);
    const quitter = new AbortController();
    const gaveUp = p.acquire(quitter.signal).then(() => "served", () => "gave up");
    const next = p.acquire(new AbortController().signal);
    quitter.abort();
    assertEquals(await gaveUp, "gave up");
    a.conn.close();
    p.release(a.conn, true); // closed: not kept, its slot opens a new connection
    const b = await next;
    assert(!b.reused);
    assertEquals(p.opened, 2);
    p.release(b.conn, true);
  } finally {
    p.close();
    server.close();
  }
});

Deno.test("hl7 pool: an idle connection the peer closes leaves the pool", async () => {
  const server = holdingServer();
  const p = pool(server.port, 1);
  try {
    const a = await p.acquire(new AbortController().signal);
    p.release(a.conn, true);
    assertEquals(p.idle, 1);
    await waitFor(() => Promise.resolve(server.conns.length === 1), {
      timeoutMs: 5000,
      description: "the server's side of the connection",
    });
    server.conns[0].close();
    await waitFor(() => Promise.resolve(p.idle === 0), {
      timeoutMs: 5000,
      description: "the pool to drop the closed connection",
    });
    const b = await p.acquire(new AbortController().signal);
    assert(!b.reused);
    p.release(b.conn, true);
  } finally {
    p.close();
    server.close();
  }
});
