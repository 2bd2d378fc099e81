/**
 * The running gateway: runtime generations, listeners, reload and shutdown.
 *
 * @module
 */
export { ConfigError, Gateway, type GatewayOptions } from "./gateway.ts";
export { buildRuntime, Runtime } from "./build.ts";
