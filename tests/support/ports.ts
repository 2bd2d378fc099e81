/** Free TCP ports on the loopback interface. */

/** A TCP port that was free a moment ago (bound to port 0, read, closed). */
export function freePort(hostname = "127.0.0.1"): number {
  const listener = Deno.listen({ hostname, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
