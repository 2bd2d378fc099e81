/**
 * The least a Deno process in the middle can do (`deno run --allow-net bench/dimse/relay.ts
 * <upstream port>`): a TCP relay on a free loopback port (printed on stdout) that copies bytes
 * between each client and a connection of its own to the upstream port, parsing nothing. The
 * round-trip benchmark (send.ts) puts it between a DIMSE client and dcmqrscp to show what one
 * hop through this runtime costs before any DICOM work.
 */

/** Relays connections on a free loopback port to `upstreamPort`; returns the port. */
export function startRelay(upstreamPort: number): { port: number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      conn.setNoDelay(true);
      Deno.connect({ hostname: "127.0.0.1", port: upstreamPort }).then((up) => {
        up.setNoDelay(true);
        conn.readable.pipeTo(up.writable).catch(() => {});
        up.readable.pipeTo(conn.writable).catch(() => {});
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
