/** The pipeline executor, route table, target selection and the middleware/backend contracts. */
export { type BuiltPipeline, type ExecutorDeps, runPipeline } from "./executor.ts";
export { abortAfter } from "./deadlines.ts";
export { type FrontDoorDeps, requestIdOf, RequestRecord } from "./front_door.ts";
export { normalizePrefix, relativePath, type Route, RouteTable } from "./routes.ts";
export { joinUrl, Target, TargetPool } from "./targets.ts";
export type {
  Backend,
  BackendCall,
  BackendFactory,
  BuildContext,
  Middleware,
  MiddlewareFactory,
  TransformSource,
} from "./types.ts";
