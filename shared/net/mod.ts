/**
 * Network helpers shared by the gateway and the cloud: the slow-client guard in front of
 * `Deno.serve` (header, idle and per-address limits the runtime's server does not have).
 *
 * @module
 */
export {
  type ClientAddr,
  clientInfo,
  GuardedListener,
  type GuardedListenOptions,
  type GuardOptions,
} from "./guarded_listener.ts";
export { DEFAULT_GUARD, guardedServe, type GuardedServer } from "./guarded_serve.ts";
