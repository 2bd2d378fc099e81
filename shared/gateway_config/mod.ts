/**
 * The gateway configuration: TOML text -> validated GatewayConfig -> TOML text. Pure functions on
 * text (no file system), shared by the gateway and the cloud service.
 */
export * from "./types.ts";
export { type KeyPosition, type KeyPositions, keyPositions, parseConfigText } from "./parse.ts";
export type { ParsedConfigText } from "./parse.ts";
export {
  DEFAULT_NETWORK_NAME,
  sortProblems,
  validateConfig,
  type ValidationResult,
} from "./validate.ts";
export { validateConfigText } from "./text.ts";
export { writeConfigToml, type WriteOptions } from "./writer.ts";
export { scanToml, type StringKind, type StringSpan, type TomlScan } from "./scan.ts";
export { closest, didYouMean, editDistance } from "./suggest.ts";
export { describeValue, type FieldSpec, isTable, ProblemSink, type TableSpec } from "./fields.ts";
export {
  BACKEND,
  BACKEND_OPTION_SCHEMAS,
  type BackendOwner,
  CLOUD,
  CONTENT_LIMITS,
  ENDPOINT,
  ENDPOINT_OPTION_SCHEMAS,
  HEALTH_CHECK,
  HTTP3_LISTENER,
  HTTP_FAMILY_ENDPOINTS,
  HTTP_LIKE_BACKENDS,
  LOGGING,
  MANAGEMENT,
  MIDDLEWARE,
  MIDDLEWARE_OPTION_SCHEMAS,
  NETWORK,
  normalizePathPrefix,
  type OptionSchema,
  PIPELINE,
  PROXY,
  type RuleProblem,
  SECTIONS,
  TARGET,
  TOP_LEVEL,
} from "./schema.ts";
export { configReferenceMarkdown } from "./reference.ts";
