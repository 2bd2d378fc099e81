/**
 * The running gateway: runtime generations, listeners, reload and shutdown.
 *
 * @example
 * ```ts
 * import { Gateway } from "./mod.ts";
 * import { silentLogger } from "../../shared/mod.ts";
 * import { createMetrics } from "../observability/mod.ts";
 *
 * // A gateway in this process: one echo pipeline on a free port, no management API.
 * const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const port = (probe.addr as Deno.NetAddr).port;
 * probe.close();
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(
 *   `${dir}/gateway.toml`,
 *   `[network.main]
 * bind = "127.0.0.1"
 * port = ${port}
 * [management]
 * enabled = false
 * [endpoints.api]
 * service = "http"
 * [endpoints.api.options]
 * path_prefix = "/api"
 * [backends.echo]
 * service = "echo"
 * [pipelines.main]
 * endpoints = ["api"]
 * backends = ["echo"]
 * `,
 * );
 * const gateway = new Gateway({
 *   configFile: `${dir}/gateway.toml`,
 *   logger: silentLogger,
 *   metrics: createMetrics(),
 * });
 * await gateway.start();
 * const res = await fetch(`http://127.0.0.1:${gateway.ports().main}/api/hello`);
 * console.log(res.status); // 200: the echo backend describes the request
 * await res.body?.cancel();
 * await gateway.shutdown();
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
export { ConfigError, Gateway, type GatewayOptions } from "./gateway.ts";
export { buildRuntime, Runtime } from "./build.ts";
export { DataPlane, type DataPlaneDeps } from "./data_plane.ts";
export {
  type GatewayConfigSource,
  type GatewayReload,
  type RunningGateway,
  startGateway,
  type StartGatewayOptions,
} from "./start.ts";
export {
  type BackendTypeDefinition,
  type MiddlewareTypeDefinition,
  registerBackendType,
  registerMiddlewareType,
  type TypeDefinition,
  unregisterBackendType,
  unregisterMiddlewareType,
} from "./custom_types.ts";
