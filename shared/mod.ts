/**
 * Code shared by the gateway, the cloud and gwcli: the structured logger, machine-token claims,
 * atomic file writes, the management API's discovery file, the gateway status body and the clock
 * (time and timers, which tests advance). The
 * folders beside this file (`gateway_config/`, `jolt/`, `jmix/`, `net/`) have faces of their own.
 *
 * @example
 * ```ts
 * import { Logger } from "./mod.ts";
 *
 * const log = new Logger({ level: "info", format: "json", sink: (line) => console.log(line) });
 * log.info("started", { port: 8080 });
 * ```
 *
 * @module
 */
export * from "./clock.ts";
export * from "./files.ts";
export * from "./gateway_status.ts";
export * from "./log.ts";
export * from "./release_signature.ts";
export * from "./management_discovery.ts";
export * from "./tokens.ts";
