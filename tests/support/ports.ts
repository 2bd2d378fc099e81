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

// Test files run in parallel processes: two of them could both find a port free and both bind
// it. A claim file per port, created exclusively, hands each port to one process; a claim older
// than CLAIM_TTL_MS is stale (its process bound the port long ago, or is gone) and is taken over.
const CLAIMS = `${Deno.env.get("TMPDIR") ?? "/tmp"}/gateway-test-ports`;
const CLAIM_TTL_MS = 10 * 60 * 1000;

/** True when this process now holds the claim on `port`. */
function claim(port: number): boolean {
  const file = `${CLAIMS}/${port}`;
  try {
    Deno.mkdirSync(CLAIMS, { recursive: true });
    Deno.writeTextFileSync(file, String(Deno.pid), { createNew: true });
    return true;
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) return true; // No claims possible: as before.
    try {
      const age = Date.now() - (Deno.statSync(file).mtime?.getTime() ?? 0);
      if (age < CLAIM_TTL_MS) return false;
      Deno.writeTextFileSync(file, String(Deno.pid));
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * A TCP port that was free a moment ago, that no outgoing connection will take meanwhile, and
 * that no other test process was handed in the last ten minutes.
 */
export function freePort(hostname = "127.0.0.1"): number {
  for (let tries = 0; tries < 500; tries++) {
    const port = next;
    next += 1 + Math.floor(Math.random() * 8);
    if (next >= PAST_HIGHEST) next = LOWEST + (next - PAST_HIGHEST);
    try {
      Deno.listen({ hostname, port }).close();
    } catch {
      continue; // In use: try the next one.
    }
    if (claim(port)) return port;
  }
  // Hardly possible: let the kernel choose.
  const listener = Deno.listen({ hostname, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
