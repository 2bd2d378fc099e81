/**
 * The `http3` backend: requests to an upstream over HTTP/3 (QUIC), one pooled connection per
 * target, on the protocol code of gateway/http3.
 *
 * @example
 * ```ts
 * import { createHttp3Backend } from "./mod.ts";
 * import { validateConfigText } from "../../../shared/gateway_config/mod.ts";
 * import { silentLogger } from "../../../shared/mod.ts";
 *
 * // An HTTP/3 upstream is always TLS; its connection opens on the first request.
 * const { config, problems } = validateConfigText(
 *   `[backends.edge]
 * service = "http3"
 * [backends.edge.options]
 * host = "127.0.0.1"
 * port = 8443
 * [endpoints.api]
 * service = "http"
 * [endpoints.api.options]
 * path_prefix = "/api"
 * [pipelines.p]
 * endpoints = ["api"]
 * backends = ["edge"]
 * `,
 *   "gateway.toml",
 * );
 * console.log(problems.length); // 0
 * const backend = await createHttp3Backend(config!.backends.edge, {
 *   config: config!,
 *   logger: silentLogger,
 *   baseDir: ".",
 *   validateOnly: true,
 * });
 * console.log(backend.name); // edge
 * ```
 *
 * @module
 */
export * from "./backend.ts";
export * from "./pool.ts";
