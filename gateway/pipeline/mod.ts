/**
 * The pipeline executor, route table, target selection and the middleware/backend contracts.
 *
 * @example
 * ```ts
 * import { requestIdOf, RouteTable } from "./mod.ts";
 *
 * console.log(requestIdOf("trace-42")); // trace-42: a sane client id is kept
 * console.log(requestIdOf("bad id\r\n").length); // 36: anything else becomes a UUID
 * console.log(typeof RouteTable); // function
 * ```
 *
 * @module
 */
export { type BuiltPipeline, type ExecutorDeps, runPipeline } from "./executor.ts";
export { abortAfter } from "./deadlines.ts";
export {
  type AuditSink,
  type FailureOptions,
  type FrontDoorDeps,
  type LogFields,
  LogFieldSource,
  requestIdOf,
  type RequestOrigin,
  RequestRecord,
} from "./front_door.ts";
export { type PipelineError, type RequestEvent, RequestFeed, requestFeed } from "./request_feed.ts";
export { normalizePrefix, relativePath, type Route, RouteTable } from "./routes.ts";
export { joinUrl, Target, TargetPool } from "./targets.ts";
export { callAbortOf } from "./types.ts";
export type {
  Backend,
  BackendCall,
  BackendFactory,
  BuildContext,
  BuildMetrics,
  CallAbort,
  CallAbortListener,
  HookedCall,
  Middleware,
  MiddlewareFactory,
  TransformSource,
  UpstreamReader,
} from "./types.ts";
