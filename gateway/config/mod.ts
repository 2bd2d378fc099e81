/**
 * Gateway configuration on disk: loading, env substitution, the embedded default, watching.
 *
 * @module
 */
export {
  loadConfigFile,
  loadConfigText,
  type LoadOptions,
  type LoadResult,
  MANAGED_FILE_SECTIONS,
  PIPELINE_FILE_SECTIONS,
} from "./load.ts";
export { DEFAULT_CONFIG_TEXT, EMBEDDED_CONFIG_NAME, loadDefaultConfig } from "./default.ts";
export { type ConfigWatcher, WATCH_DEBOUNCE_MS, watchConfig } from "./watch.ts";
export { formatProblem, formatProblems } from "./format.ts";
export { type EnvLookup, substituteEnv, type SubstitutionResult } from "./env.ts";
