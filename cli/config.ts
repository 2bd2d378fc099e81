/**
 * The CLI configuration: `config.json` in the data directory, whose only key is `api-url` (the
 * cloud service). Precedence, highest first: the file, the environment (`GATEWAY_API_URL`), the
 * default.
 */
import { CliError, usageError } from "./errors.ts";
import type { Env } from "./env.ts";
import { readTextIfExists, writeFileAtomic } from "./files.ts";

/** Default cloud URL: the address `deno task cloud` serves on (a self-hosted control plane). */
export const DEFAULT_API_URL = "http://localhost:8000";

/** Environment variable of `api-url`. */
export const API_URL_ENV = "GATEWAY_API_URL";

/** The configuration keys (SPEC: only `api-url`). */
export const CONFIG_KEYS = ["api-url"] as const;

/** A configuration key. */
export type ConfigKey = typeof CONFIG_KEYS[number];

/** The content of `config.json`. */
export type ConfigFile = Partial<Record<ConfigKey, string>>;

/** Where an effective value comes from. */
export type ConfigSource = "file" | "env" | "default";

/** An effective value with its source. */
export interface ResolvedValue {
  key: ConfigKey;
  value: string;
  source: ConfigSource;
}

const ENV_OF: Record<ConfigKey, string> = { "api-url": API_URL_ENV };
const DEFAULT_OF: Record<ConfigKey, string> = { "api-url": DEFAULT_API_URL };

/** Checks that `key` is a configuration key. */
export function parseConfigKey(key: string): ConfigKey {
  if ((CONFIG_KEYS as readonly string[]).includes(key)) return key as ConfigKey;
  throw usageError(
    `unknown configuration key '${key}'`,
    `Supported key: ${CONFIG_KEYS.join(", ")}.`,
  );
}

/**
 * `value` as an `api-url`: it must start with `http://` or `https://` and be a URL without a
 * query or fragment; a trailing slash is dropped. `what` names the value's origin in errors.
 */
export function validateApiUrl(value: string, what = "api-url"): string {
  const text = value.trim();
  if (!/^https?:\/\//i.test(text)) {
    throw usageError(`${what} must start with http:// or https:// (got ${JSON.stringify(value)})`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`${what} is not a valid URL: ${JSON.stringify(value)}`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw usageError(`${what} must not have credentials, a query or a fragment`);
  }
  return url.href.replace(/\/+$/, "");
}

/** Checks `value` for `key` and returns it normalized. */
export function validateConfigValue(key: ConfigKey, value: string, what: string = key): string {
  switch (key) {
    case "api-url":
      return validateApiUrl(value, what);
  }
}

/** Reads `config.json`; missing means empty. Unknown keys are dropped. */
export async function readConfigFile(path: string): Promise<ConfigFile> {
  const text = await readTextIfExists(path);
  if (text === undefined || text.trim() === "") return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not valid JSON`, {
      hint: "Fix or delete the file (`gwcli config:set api-url URL` writes a new one).",
    });
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new CliError(`${path} must hold a JSON object`);
  }
  const out: ConfigFile = {};
  for (const key of CONFIG_KEYS) {
    const value = (raw as Record<string, unknown>)[key];
    if (typeof value === "string") out[key] = value;
  }
  return out;
}

/** Writes `config.json` atomically (0600). */
export async function writeConfigFile(path: string, config: ConfigFile): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(config, null, 2) + "\n");
}

/** The effective value of `key`: file, then environment, then default; each is validated. */
export function resolveConfigValue(
  key: ConfigKey,
  file: ConfigFile,
  env: Env,
  filePath = "config.json",
): ResolvedValue {
  const fromFile = file[key];
  if (fromFile !== undefined) {
    return {
      key,
      value: validateConfigValue(key, fromFile, `${key} in ${filePath}`),
      source: "file",
    };
  }
  const fromEnv = env(ENV_OF[key]);
  if (fromEnv !== undefined && fromEnv !== "") {
    return { key, value: validateConfigValue(key, fromEnv, ENV_OF[key]), source: "env" };
  }
  return { key, value: DEFAULT_OF[key], source: "default" };
}

/** A readable description of a source (`config file`, `GATEWAY_API_URL`, `default`). */
export function describeSource(key: ConfigKey, source: ConfigSource): string {
  switch (source) {
    case "file":
      return "config file";
    case "env":
      return ENV_OF[key];
    case "default":
      return "default";
  }
}
