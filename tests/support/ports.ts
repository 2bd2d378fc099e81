/** Free TCP ports on the loopback interface. */

// Ports come from below Linux's ephemeral range (32768-60999 by default). A port the kernel hands
// out for port 0 comes from that range, which every outgoing connection on the machine also draws
// its local port from: a port picked that way and bound seconds later (a C-MOVE destination the
// gateway opens on the first retrieve) can meanwhile be the local end of someone's connection,
// and the bind fails with "Address already in use". Ports below the range are only ever taken by
// listeners, which the check here sees.
const LOWEST = 20000;
const PAST_HIGHEST = 32768;
// Each test process starts at its own random place, and walks on in small random steps.
let next = LOWEST + Math.floor(Math.random() * (PAST_HIGHEST - LOWEST));

/** A TCP port that was free a moment ago and that no outgoing connection will take meanwhile. */
export function freePort(hostname = "127.0.0.1"): number {
  for (let tries = 0; tries < 500; tries++) {
    const port = next;
    next += 1 + Math.floor(Math.random() * 8);
    if (next >= PAST_HIGHEST) next = LOWEST + (next - PAST_HIGHEST);
    try {
      Deno.listen({ hostname, port }).close();
      return port;
    } catch {
      // In use: try the next one.
    }
  }
  // Hardly possible: let the kernel choose.
  const listener = Deno.listen({ hostname, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
