/**
 * Loading a configuration from disk: env substitution, parsing, merging the files of
 * `pipelines_path`, validation, and resolving paths against the main file's directory (what the
 * gateway writes against `GATEWAY_STATE_DIR` when it is set). Never throws: everything that goes
 * wrong is a ConfigProblem.
 */
import {
  DEFAULT_DATA_DIR,
  pathProblems,
  type PushedPolicy,
  pushedPolicy,
  refusedVariable,
} from "./pushed_policy.ts";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { STATE_DIR_ENV } from "./state_dir.ts";
import {
  type ConfigProblem,
  DEFAULT_NETWORK_NAME,
  describeValue,
  didYouMean,
  type GatewayConfig,
  isTable,
  type KeyPositions,
  parseConfigText,
  ProblemSink,
  sortProblems,
  validateConfig,
  visitFields,
} from "../../shared/gateway_config/mod.ts";
import { type EnvLookup, substituteEnv } from "./env.ts";

/** The outcome of loading: `config` is set exactly when `problems` is empty. */
export interface LoadResult {
  /** The configuration, when it loaded without problems. */
  config?: GatewayConfig;
  /** Every problem found (file, line, key); empty when the configuration is valid. */
  problems: ConfigProblem[];
  /** Absolute paths of every file read (main file first), valid or not: what to watch. */
  files: string[];
  /** Absolute directories whose `*.toml` files are part of the config (`pipelines_path`). */
  dirs: string[];
}

/** Options of loadConfigText. */
export interface LoadOptions {
  /** Directory relative paths resolve against; default: the current directory. */
  baseDir?: string;
  /** Path of the main file itself, never merged again when it lies in `pipelines_path`. */
  mainFile?: string;
  /** Environment for `${VAR}`; default: the process environment. */
  env?: EnvLookup;
  /**
   * Directory the paths of what the gateway writes resolve against (`[cloud] state_dir` and
   * `data_dir`, queue directories, the audit file); default: `GATEWAY_STATE_DIR` of `env`, else
   * `baseDir`. A relative one resolves against the current directory.
   */
  stateDir?: string;
  /**
   * Files merged after those of `pipelines_path`, like them, that may also define `[network.*]`
   * (the configuration pulled from the cloud service). A missing file is skipped. They are not
   * listed in `files` or `source_files`: whoever writes them triggers the reload.
   */
  managedFiles?: string[];
}

/** Tables a file of `pipelines_path` may hold. */
export const PIPELINE_FILE_SECTIONS = [
  "endpoints",
  "backends",
  "targets",
  "middleware",
  "pipelines",
];

/** Tables a managed file (see {@link LoadOptions.managedFiles}) may hold. */
export const MANAGED_FILE_SECTIONS = [...PIPELINE_FILE_SECTIONS, "network"];

/** Reads and loads the config file at `path`; relative paths in it resolve against its directory. */
export async function loadConfigFile(
  path: string,
  options: Omit<LoadOptions, "baseDir" | "mainFile"> = {},
): Promise<LoadResult> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    return {
      problems: [{
        file: path,
        path: "",
        message: `cannot read config file: ${(err as Error).message}`,
      }],
      files: [absolute],
      dirs: [],
    };
  }
  const loaded = await loadConfigText(text, path, {
    ...options,
    baseDir: dirname(absolute),
    mainFile: absolute,
  });
  loaded.files.unshift(absolute);
  loaded.config?.source_files.unshift(absolute);
  return loaded;
}

/** Loads config `text` named `name` (used in problems); reads only the `pipelines_path` files. */
export async function loadConfigText(
  text: string,
  name: string,
  options: LoadOptions = {},
): Promise<LoadResult> {
  const baseDir = resolve(options.baseDir ?? Deno.cwd());
  const env = options.env ?? ((key: string) => Deno.env.get(key));
  const stateDir = resolve(options.stateDir ?? (env(STATE_DIR_ENV)?.trim() || baseDir));
  const main = prepare(text, name, env);
  const result: LoadResult = { problems: main.problems, files: [], dirs: [] };
  if (!main.raw) return result;

  const merged = { raw: main.raw, positions: main.positions };
  const pipelinesPath = main.raw.pipelines_path;
  if (typeof pipelinesPath === "string" && pipelinesPath !== "") {
    const dir = resolve(baseDir, pipelinesPath);
    result.dirs.push(dir);
    const listed = await listTomlFiles(dir);
    if (typeof listed === "string") {
      const sink = new ProblemSink(main.positions, name);
      sink.report("pipelines_path", `cannot read directory ${dir}: ${listed}`);
      result.problems.push(...sink.problems);
    } else {
      const self = options.mainFile && resolve(options.mainFile);
      for (const file of listed.filter((f) => f !== self)) {
        result.files.push(file);
        result.problems.push(...await mergeFile(merged, file, name, env));
      }
    }
  }

  // The managed file comes from the cloud: untrusted, limited by the local file's [cloud] table.
  const policy = pushedPolicy(main.raw, baseDir, stateDir);
  for (const file of options.managedFiles ?? []) {
    result.problems.push(
      ...await mergeFile(merged, file, name, env, MANAGED_FILE_SECTIONS, { policy, baseDir }),
    );
  }

  const validated = validateConfig(merged.raw, merged.positions, name);
  result.problems = sortProblems([...result.problems, ...validated.problems], name);
  if (validated.config && result.problems.length === 0) {
    const config = validated.config;
    config.transforms_path = resolve(baseDir, config.transforms_path);
    resolveStatePaths(config, stateDir);
    resolvePaths(config, baseDir, stateDir);
    config.source_files = [...result.files];
    result.config = config;
  }
  return result;
}

/**
 * Every file path of the configuration (the keys the schema marks `path: "config"`: TLS and
 * HTTP/3 certificates, DICOM `storage_dir`, storage roots, CA files, the management token file)
 * resolved against the main config file's directory, and those marked `path: "state"` (queue
 * directories, the audit file) against the state directory, in this one place, so that no module
 * reads a relative path against the process's working directory. `s3://` roots are not paths.
 */
function resolvePaths(config: GatewayConfig, baseDir: string, stateDir: string): void {
  visitFields(config as unknown as Record<string, unknown>, (f) => {
    if (f.spec.path !== "config" && f.spec.path !== "state") return;
    if (typeof f.value !== "string" || f.value === "" || f.value.startsWith("s3://")) return;
    f.holder[f.key] = resolve(f.spec.path === "state" ? stateDir : baseDir, f.value);
  });
}

/**
 * The `[cloud]` directories and the default queue directories, absolute in `stateDir`: the
 * modules that use them resolve nothing further, so a read-only config directory (systemd's
 * `ProtectSystem=strict`, a container's read-only mount) is never written.
 */
function resolveStatePaths(config: GatewayConfig, stateDir: string): void {
  config.cloud.state_dir = resolve(stateDir, config.cloud.state_dir ?? "state");
  config.cloud.data_dir = resolve(stateDir, config.cloud.data_dir ?? DEFAULT_DATA_DIR);
  for (const [name, backend] of Object.entries(config.backends)) {
    if (backend.queue && backend.queue.dir === undefined) {
      backend.queue.dir = join(stateDir, "queues", name);
    }
  }
}

interface Prepared {
  raw?: Record<string, unknown>;
  positions: KeyPositions;
  problems: ConfigProblem[];
}

/** Substitutes the environment into one file's text and parses it. */
function prepare(
  text: string,
  file: string,
  env: EnvLookup,
  refuse?: (name: string) => string | undefined,
): Prepared {
  const substituted = substituteEnv(text, file, env, refuse);
  const parsed = parseConfigText(substituted.text, file);
  return { ...parsed, problems: [...substituted.problems, ...parsed.problems] };
}

/** The `*.toml` files of `dir`, sorted by name, or the reason they cannot be listed. */
async function listTomlFiles(dir: string): Promise<string[] | string> {
  try {
    const names: string[] = [];
    for await (const entry of Deno.readDir(dir)) {
      if (entry.name.endsWith(".toml") && !entry.isDirectory) names.push(entry.name);
    }
    return names.sort().map((n) => join(dir, n));
  } catch (err) {
    return (err as Error).message;
  }
}

/** Adds the tables of one pipelines file to `merged`; a name defined twice is a problem. */
async function mergeFile(
  merged: { raw: Record<string, unknown>; positions: KeyPositions },
  file: string,
  mainFile: string,
  env: EnvLookup,
  sections: readonly string[] = PIPELINE_FILE_SECTIONS,
  pushed?: { policy: PushedPolicy; baseDir: string },
): Promise<ConfigProblem[]> {
  // A pushed (managed) file may be missing; a pipelines file that was listed may not.
  const optional = pushed !== undefined;
  const name = displayName(file);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (optional && err instanceof Deno.errors.NotFound) return [];
    return [{
      file: name,
      path: "",
      message: `cannot read config file: ${(err as Error).message}`,
    }];
  }
  const part = prepare(
    text,
    name,
    env,
    pushed && ((variable) => refusedVariable(pushed.policy, variable)),
  );
  if (!part.raw) return part.problems;
  const sink = new ProblemSink(part.positions, name);
  if (pushed) {
    for (const [path, message] of pathProblems(part.raw, pushed.policy, pushed.baseDir)) {
      sink.report(path, message);
    }
  }
  for (const [section, value] of Object.entries(part.raw)) {
    if (!sections.includes(section)) {
      const hint = didYouMean(section, [...sections]) ||
        `; a ${optional ? "managed" : "pipelines"} file holds only ${sections.join(", ")}`;
      sink.report(section, `unknown key \`${section}\`${hint}`);
      continue;
    }
    if (!isTable(value)) {
      sink.report(section, `expected table, found ${describeValue(value)}`);
      continue;
    }
    if (section === "network" && !Object.hasOwn(merged.raw, "network")) {
      // Without a [network] table the main file implies the `default` listener; networks added
      // here must not silently take its place.
      merged.raw.network = { [DEFAULT_NETWORK_NAME]: {} };
    }
    const target = merged.raw[section] ?? (merged.raw[section] = {});
    if (!isTable(target)) continue; // the main file's own value is reported by validation
    for (const [name, entry] of Object.entries(value)) {
      const path = `${section}.${name}`;
      if (Object.hasOwn(target, name)) {
        const first = merged.positions.get(path);
        const where = first ? `${first.file}:${first.line}` : mainFile;
        sink.report(path, `\`${path}\` is already defined at ${where}`);
        continue;
      }
      Object.defineProperty(target, name, {
        value: entry,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      for (const [key, position] of part.positions) {
        if (key === path || key.startsWith(path + ".") || key.startsWith(path + "[")) {
          merged.positions.set(key, position);
        }
      }
    }
  }
  return [...part.problems, ...sink.problems];
}

/** `file` relative to the current directory when it lies below it (shorter messages). */
function displayName(file: string): string {
  const rel = relative(Deno.cwd(), file);
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? file : rel;
}
