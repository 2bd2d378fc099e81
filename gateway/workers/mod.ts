/**
 * Data-plane workers (`[runtime] workers = N`): the main thread and N-1 worker threads each serve
 * the HTTP listeners on the same ports (SO_REUSEPORT). The main thread keeps the management API,
 * the config watcher, the cloud client, DIMSE and HTTP/3, the delivery queues and the audit file;
 * it takes each configuration through the workers in two phases (all switch or none does),
 * merges their metrics into one `/metrics`, and watches each with a heartbeat (a frozen worker is
 * reported, then replaced; the main thread has a watchdog thread of its own).
 *
 * @example
 * ```ts
 * import { defaultWorkerCount } from "./mod.ts";
 *
 * // Written in the config, [runtime] workers wins; else GATEWAY_WORKERS; else the CPU cores.
 * console.log(defaultWorkerCount({ workers: 3, shutdown_grace_secs: 10 }, () => "8")); // 3
 * console.log(defaultWorkerCount({ shutdown_grace_secs: 10 }, () => "2")); // 2
 * console.log(defaultWorkerCount({ shutdown_grace_secs: 10 }, () => undefined) >= 1); // true
 * ```
 *
 * @module
 */
export { defaultWorkerCount } from "./count.ts";
export { LISTEN_LOCK_BYTES, noteListen } from "./listen_sockets.ts";
export { EXIT_CODE, MainWatchdog, type MainWatchdogSettings } from "./main_watchdog.ts";
export {
  type IsolateHealth,
  type UnresponsiveWorker,
  type WorkerHandle,
  type WorkerInfo,
  WorkerPool,
  type WorkerPoolDeps,
} from "./pool.ts";
export type { FromWorker, PrepareMessage, QueuedRequest, ToWorker } from "./protocol.ts";
export { TEST_HOOKS_ENV } from "./test_hooks.ts";
export type { WatchdogSettings } from "./watchdog.ts";
