/**
 * Network helpers shared by the gateway and the cloud: HTTP served behind the slow-client guard
 * (header, idle and per-address limits the runtime's `Deno.serve` does not have), and IP address
 * ranges (CIDR) for allow and deny lists. The guard's one use of the runtime's internals sits
 * behind `runtimeHttp` (deno_internals.ts), self-tested at start; without it the guard relays
 * each connection to a loopback `Deno.serve`.
 *
 * @example
 * ```ts
 * import { DEFAULT_GUARD, guardedServe } from "./mod.ts";
 *
 * // Deno.serve behind header and idle timeouts and a per-address connection cap.
 * const server = guardedServe(
 *   { hostname: "127.0.0.1", port: 0, guard: DEFAULT_GUARD },
 *   () => new Response("hello"),
 * );
 * const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
 * console.log(await res.text()); // hello
 * await server.shutdown();
 * ```
 *
 * @module
 */
export {
  type ClientAddr,
  ClientConnection,
  clientOf,
  GuardedListener,
  type GuardedListenOptions,
  GuardedServeInfo,
  type GuardOptions,
} from "./guarded_listener.ts";
export { DEFAULT_GUARD, guardedServe, type GuardedServer } from "./guarded_serve.ts";
export {
  type ConnectionServer,
  probeRuntimeHttp,
  type RuntimeHttp,
  runtimeHttp,
} from "./deno_internals.ts";
export { AddressRanges, parseAddress, rangeProblem } from "./address_ranges.ts";
export { ADDRESS_SLOTS, AddressCounts, type Admission, fingerprint } from "./address_counts.ts";
