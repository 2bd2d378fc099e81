/**
 * The least a Deno process in the middle can do (`deno run --allow-net bench/dimse/relay.ts
 * <upstream port>`): a TCP relay on a free loopback port (printed on stdout) that copies bytes
 * between each client and a connection of its own to the upstream port, parsing nothing: each
 * direction one reused buffer, one read then one write per chunk (no streams). The round-trip
 * benchmark (send.ts) puts it between a DIMSE client and dcmqrscp to show what one hop through
 * this runtime costs before any DICOM work.
 */

/** Copies `from` to `to` until either closes, then closes `to`. */
async function pump(from: Deno.TcpConn, to: Deno.TcpConn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      let at = 0;
      while (at < n) at += await to.write(buf.subarray(at, n));
    }
  } catch {
    // the other side went away
  }
  try {
    to.close();
  } catch {
    // closed already
  }
}

/** Relays connections on a free loopback port to `upstreamPort`; returns the port. */
export function startRelay(upstreamPort: number): { port: number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      conn.setNoDelay(true);
      Deno.connect({ hostname: "127.0.0.1", port: upstreamPort }).then((up) => {
        up.setNoDelay(true);
        pump(conn, up);
        pump(up, conn);
      }, () => conn.close());
    }
  })().catch(() => {});
  return { port: (listener.addr as Deno.NetAddr).port, close: () => listener.close() };
}

if (import.meta.main) {
  const upstream = Number(Deno.args[0]);
  if (!Number.isInteger(upstream) || upstream < 1 || upstream > 65535) {
    console.error("usage: deno run --allow-net bench/dimse/relay.ts <upstream port>");
    Deno.exit(2);
  }
  console.log(startRelay(upstream).port);
}
