/**
 * gwcli, the command-line client: its public entry for tests and other programs.
 *
 * @example
 * ```ts
 * import { CliError, EXIT } from "./mod.ts";
 *
 * // Commands fail with a CliError: its message, a hint for the user, and the exit code.
 * const err = new CliError("not logged in", { exitCode: EXIT.auth, hint: "run `gwcli login`" });
 * console.log(err.exitCode === EXIT.auth, err.hint); // true run `gwcli login`
 * ```
 *
 * @module
 */
export { buildProgram, runCli } from "./program.ts";
export { commandList } from "./commands/mod.ts";
export { CliContext, type CliDeps } from "./context.ts";
export { CliError, EXIT } from "./errors.ts";
export { type Env, envOf, processEnv } from "./env.ts";
export { Output, type Sinks } from "./output.ts";
export { GWCLI_VERSION } from "./version.ts";
export {
  API_URL_ENV,
  type ConfigFile,
  DEFAULT_API_URL,
  readConfigFile,
  resolveConfigValue,
  validateApiUrl,
} from "./config.ts";
export { type GwcliPaths, HOME_ENV, resolvePaths } from "./paths.ts";
export { type Instance, loadInstances, saveInstances } from "./instances.ts";
export { SecureStore, STORE_ENV, type StoredCredentials } from "./secure_store.ts";
export { ENCRYPTION_KEY_ENV } from "./age_file.ts";
export { KEYCHAIN_ACCOUNT, KEYCHAIN_SERVICE } from "./keychain.ts";
export type { SecretBackend } from "./secret_backend.ts";
export {
  DEFAULT_RELEASE_URL,
  latestIndexUrl,
  RELEASE_URL_ENV,
  releaseFiles,
  releasePlatform,
} from "./install/mod.ts";
