/**
 * The healthcare data-pipeline gateway as a library: start a gateway inside a Deno program, load
 * and validate configurations, write them back as TOML, run JOLT transforms, and add middleware
 * types and backend services of your own without editing the project.
 *
 * A custom type is registered once per process, before the gateway that uses it starts (or before
 * the reload that first names it). It is then configured like a built-in one,
 * `[middleware.<name>] type = "<your type>"` or `[backends.<name>] service = "<your service>"`,
 * and its `options` table is checked against the fields it declares, with the same file, line and
 * key in every problem. Custom types are known to this process only: the cloud service and
 * `gwcli` validate configurations against the built-in types.
 *
 * @example Start a gateway from a config object, with a custom middleware and a custom backend
 * ```ts
 * import {
 *   type Backend,
 *   type Middleware,
 *   registerBackendType,
 *   registerMiddlewareType,
 *   ResponseEnvelope,
 *   startGateway,
 * } from "./mod.ts";
 *
 * // A middleware that stamps every request's metadata with a site name from its options.
 * registerMiddlewareType("site_stamp", {
 *   doc: "Adds `site` to the request metadata.",
 *   options: { site: { type: "string", doc: "Site name.", required: true } },
 *   create: (config): Middleware => ({
 *     name: config.name,
 *     acts: { request: true, response: false },
 *     onRequest(req) {
 *       req.metadata.site = String(config.options.site);
 *     },
 *   }),
 * });
 * // A backend that answers with the site it was given, calling nothing.
 * registerBackendType("site_reply", {
 *   doc: "Answers with the request's site as JSON.",
 *   create: (config): Backend => ({
 *     name: config.name,
 *     config,
 *     invoke: (req) => Promise.resolve(ResponseEnvelope.json(200, { site: req.metadata.site })),
 *     close() {},
 *   }),
 * });
 *
 * // A free port for the example (a deployment names its own).
 * const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const port = (probe.addr as Deno.NetAddr).port;
 * probe.close();
 *
 * const gateway = await startGateway({
 *   config: {
 *     network: { main: { bind: "127.0.0.1", port } },
 *     management: { enabled: false },
 *     logging: { level: "error" },
 *     endpoints: { api: { service: "http", options: { path_prefix: "/api" } } },
 *     middleware: { stamp: { type: "site_stamp", options: { site: "north" } } },
 *     backends: { reply: { service: "site_reply" } },
 *     pipelines: { main: { endpoints: ["api"], middleware: ["stamp"], backends: ["reply"] } },
 *   },
 * });
 * const res = await fetch(`http://127.0.0.1:${port}/api/x`);
 * console.log(await res.json()); // { site: "north" }
 * await gateway.shutdown();
 * ```
 *
 * @example Validate a configuration and write it back as TOML
 * ```ts
 * import { formatProblems, loadConfigText, writeConfigToml } from "./mod.ts";
 *
 * const bad = await loadConfigText('[backends.b]\nservice = "htp"\n', "gateway.toml");
 * console.log(formatProblems(bad.problems).includes("did you mean `http`?")); // true
 *
 * const good = await loadConfigText(
 *   '[backends.b]\nservice = "echo"\n[endpoints.e]\nservice = "http"\n' +
 *     '[endpoints.e.options]\npath_prefix = "/e"\n[pipelines.p]\nendpoints = ["e"]\nbackends = ["b"]\n',
 *   "gateway.toml",
 * );
 * if (good.config) console.log(writeConfigToml(good.config).includes("[pipelines.p]")); // true
 * ```
 *
 * @example Run a JOLT transform
 * ```ts
 * import { compileJolt } from "./mod.ts";
 *
 * const spec = compileJolt([{ operation: "shift", spec: { name: "patient.name" } }]);
 * console.log(spec.apply({ name: "Ada" })); // { patient: { name: "Ada" } }
 * ```
 *
 * @module
 */

// Running a gateway.
export {
  ConfigError,
  type GatewayConfigSource,
  type GatewayReload,
  type RunningGateway,
  startGateway,
  type StartGatewayOptions,
} from "./gateway/runtime/mod.ts";

// Custom middleware types and backend services.
export {
  type BackendTypeDefinition,
  type MiddlewareTypeDefinition,
  registerBackendType,
  registerMiddlewareType,
  type TypeDefinition,
  unregisterBackendType,
  unregisterMiddlewareType,
} from "./gateway/runtime/mod.ts";
export type {
  Backend,
  BackendCall,
  BackendFactory,
  BuildContext,
  BuildMetrics,
  Middleware,
  MiddlewareFactory,
  TransformSource,
  UpstreamReader,
} from "./gateway/pipeline/mod.ts";
export {
  Body,
  type BodySource,
  type ContentInfo,
  type Protocol,
  RequestEnvelope,
  type RequestInit as RequestEnvelopeInit,
  ResponseEnvelope,
} from "./gateway/envelope.ts";
export { GatewayError } from "./gateway/errors.ts";
// What a custom component reports its state through (BuildContext.health), and the metrics it
// may count in (BuildContext.metrics).
export type {
  AssociationMetrics,
  ComponentHealth,
  PasswordMetrics,
  RateLimitMetrics,
} from "./gateway/observability/mod.ts";
// Memory admission: the budget of bodies held in memory, and a request's lease on it.
export { BodyLease, MemoryBudget } from "./gateway/memory/mod.ts";
export type { BodyFormat } from "./gateway/codecs/mod.ts";
export { type Level as LogLevelName, Logger, type LoggerOptions } from "./shared/mod.ts";

// Configurations: loading, validating, describing options, writing.
export {
  type EnvLookup,
  formatProblem,
  formatProblems,
  loadConfigFile,
  loadConfigText,
  type LoadOptions,
  type LoadResult,
} from "./gateway/config/mod.ts";
export {
  type BackendOwner,
  type OptionDeclaration,
  type OptionKind,
  type RuleProblem,
  validateConfigText,
  type ValidationResult,
  writeConfigToml,
  type WriteOptions,
} from "./shared/gateway_config/mod.ts";
export type * from "./shared/gateway_config/types.ts";

// The JOLT engine.
export {
  compile as compileJolt,
  type CompiledSpec,
  type CompileOptions as JoltCompileOptions,
  JoltBudgetExceeded,
  JoltSpecError,
  JoltTransformError,
  type OperationName as JoltOperationName,
  parseSpec as parseJoltSpec,
} from "./shared/jolt/mod.ts";
