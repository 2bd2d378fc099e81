/**
 * Gateway configuration on disk: loading, env substitution, the embedded default, watching.
 *
 * @example
 * ```ts
 * import { formatProblems, loadConfigText } from "./mod.ts";
 *
 * // A typo in a key: the problem names the file, the line and the key, with a suggestion.
 * const result = await loadConfigText("[endpoints.api]\nservise = \"http\"\n", "gateway.toml");
 * console.log(result.config === undefined); // true
 * console.log(formatProblems(result.problems).includes("gateway.toml:2")); // true
 * ```
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
export {
  DEFAULT_CONFIG_TEXT,
  type DefaultPorts,
  EMBEDDED_CONFIG_NAME,
  loadDefaultConfig,
} from "./default.ts";
export { STATE_DIR_ENV } from "./state_dir.ts";
export { chooseDefaultPorts, type PortChoice } from "./default_ports.ts";
export { type ConfigWatcher, WATCH_DEBOUNCE_MS, watchConfig } from "./watch.ts";
export { formatProblem, formatProblems } from "./format.ts";
export { type EnvLookup, substituteEnv, type SubstitutionResult } from "./env.ts";
