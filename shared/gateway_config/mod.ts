/**
 * The gateway configuration: TOML text -> validated GatewayConfig -> TOML text. Pure functions on
 * text (no file system), shared by the gateway and the cloud service.
 *
 * @example
 * ```ts
 * import { validateConfigText, writeConfigToml } from "./mod.ts";
 *
 * const text = `
 * [endpoints.api]
 * service = "http"
 * [endpoints.api.options]
 * path_prefix = "/api"
 * [backends.echo]
 * service = "echo"
 * [pipelines.main]
 * endpoints = ["api"]
 * backends = ["echo"]
 * `;
 * const { config, problems } = validateConfigText(text, "gateway.toml");
 * console.log(problems.length, config?.pipelines.main.backends); // 0 [ "echo" ]
 * if (config) console.log(writeConfigToml(config).includes("[pipelines.main]")); // true
 * ```
 *
 * @module
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
export { isLoopbackAddress } from "./validate.ts";
export { type FieldVisit, visitFields } from "./field_walk.ts";
export {
  isSecretReference,
  literalSecretPaths,
  redactConfigText,
  REDACTED,
  type Redaction,
  redactSecrets,
} from "./secrets.ts";
export {
  describeUrlCredentials,
  inspectUrlCredentials,
  isSecretQueryName,
  redactUrlCredentials,
  redactUrlCredentialsDeep,
  type UrlCredential,
  type UrlCredentialPath,
  urlCredentialPaths,
  urlCredentials,
} from "./url_credentials.ts";
export { writeConfigToml, type WriteOptions } from "./writer.ts";
export { scanToml, type StringKind, type StringSpan, type TomlScan } from "./scan.ts";
export { closest, didYouMean, editDistance } from "./suggest.ts";
export {
  describeValue,
  field,
  type FieldSpec,
  isTable,
  ProblemSink,
  type TableSpec,
} from "./fields.ts";
export {
  backendOptionSchema,
  type CustomTypeKind,
  declaredOptions,
  knownBackendServices,
  knownMiddlewareTypes,
  middlewareOptionSchema,
  type OptionDeclaration,
  type OptionKind,
  registerCustomConfigType,
  unregisterCustomConfigType,
} from "./custom_types.ts";
export {
  BACKEND,
  CLOUD,
  CONTENT_LIMITS,
  ENDPOINT,
  HEALTH_CHECK,
  HTTP3_LISTENER,
  LOGGING,
  MANAGEMENT,
  MIDDLEWARE,
  NETWORK,
  PIPELINE,
  PROXY,
  SECTIONS,
  TARGET,
  TOP_LEVEL,
} from "./schema.ts";
export type {
  BackendOwner,
  ComponentKind,
  ComponentType,
  OptionSchema,
  RuleProblem,
} from "./component_type.ts";
export { COMPONENT_KINDS } from "./component_type.ts";
export {
  BACKEND_OPTION_SCHEMAS,
  componentNames,
  componentType,
  componentTypes,
  ENDPOINT_OPTION_SCHEMAS,
  isBuiltInType,
  MIDDLEWARE_OPTION_SCHEMAS,
  optionSchemaOf,
  registerComponentType,
  unregisterComponentType,
} from "./registry.ts";
export {
  BUILT_IN_TYPES,
  DICOMWEB_SERVICES,
  FHIR_INTERACTIONS,
  HTTP_FAMILY_ENDPOINTS,
  HTTP_LIKE_BACKENDS,
} from "./components/mod.ts";
export {
  type InputProblem,
  inputText,
  type OptionControl,
  optionFieldJsonSchema,
  type OptionInput,
  optionInputs,
  optionJsonSchema,
  optionsFromInputs,
} from "./option_inputs.ts";
export { CONFIG_TABLES, type ConfigTable, type TableAt, tablesAt } from "./tree.ts";
export { SYSLOG_FACILITIES, SYSLOG_TRANSPORTS } from "./components/mod.ts";
export { normalizePathPrefix } from "./values.ts";
export { QUEUE_NATS_DEFAULTS, QUEUE_STORES } from "./components/mod.ts";
export { configReferenceMarkdown } from "./docs_reference.ts";
export { COMPRESSED_SYNTAXES, compressedSyntaxUid, storageClassUid } from "./dicom_catalog.ts";
export { MAX_PRESENTATION_CONTEXTS, uncompressedClasses } from "./dicom_retrieve.ts";
