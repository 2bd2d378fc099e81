/** The options of a `storage` backend, checked and resolved once when the backend is built. */
import { pathProblem } from "./path_rules.ts";
import { GENERATED_NAMES, parseTemplate, type PathTemplate } from "./template.ts";

/** A root directory on the local file system (absolute). */
export interface LocalRoot {
  kind: "local";
  dir: string;
}

/** Static S3 credentials and where they came from. */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  source: "options" | "environment";
}

/** A bucket and key prefix in S3 or an S3-compatible store. */
export interface S3Root {
  kind: "s3";
  bucket: string;
  /** Key prefix without leading or trailing `/`; empty for the bucket root. */
  prefix: string;
  region: string;
  /** Endpoint of an S3-compatible store (path-style addressing); AWS when absent. */
  endpoint?: string;
  credentials: S3Credentials;
}

/** Everything the backend needs from its options. */
export interface StorageSettings {
  root: LocalRoot | S3Root;
  read?: PathTemplate;
  write?: PathTemplate;
}

/** Reads an environment variable (injected for tests). */
export type EnvLookup = (name: string) => string | undefined;

/** `Deno.env.get`, or nothing when environment access is not granted. */
export const processEnv: EnvLookup = (name) => {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
};

/** `a/./b/../c` -> `a/c` for an absolute POSIX path. */
function normalizeAbsolute(path: string): string {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return "/" + out.join("/");
}

/** The absolute local root: relative roots resolve against the config file's directory. */
export function localRootDir(root: string, baseDir: string): string {
  const absolute = root.startsWith("/") ? root : `${baseDir.replace(/\/+$/, "")}/${root}`;
  return normalizeAbsolute(absolute);
}

/** Split `s3://bucket/prefix/` into bucket and normalized prefix. */
export function parseS3Root(root: string): { bucket: string; prefix: string } {
  const rest = root.slice("s3://".length);
  const slash = rest.indexOf("/");
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const prefix = slash === -1 ? "" : rest.slice(slash + 1).replace(/^\/+|\/+$/g, "");
  if (prefix !== "") {
    const problem = pathProblem(prefix);
    if (problem) throw new Error(`root: the key prefix "${prefix}" ${problem}`);
  }
  return { bucket, prefix };
}

function text(options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Credentials from the options, else from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. */
function s3Credentials(options: Record<string, unknown>, env: EnvLookup): S3Credentials {
  const keyId = text(options, "access_key_id");
  const secret = text(options, "secret_access_key");
  if (keyId && secret) return { accessKeyId: keyId, secretAccessKey: secret, source: "options" };
  if (keyId || secret) {
    throw new Error("set both access_key_id and secret_access_key, or neither");
  }
  const envKeyId = env("AWS_ACCESS_KEY_ID");
  const envSecret = env("AWS_SECRET_ACCESS_KEY");
  if (envKeyId && envSecret) {
    const sessionToken = env("AWS_SESSION_TOKEN");
    return {
      accessKeyId: envKeyId,
      secretAccessKey: envSecret,
      ...(sessionToken ? { sessionToken } : {}),
      source: "environment",
    };
  }
  throw new Error(
    "no S3 credentials: set access_key_id and secret_access_key, or the environment " +
      "variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
  );
}

/** The S3 region: the `region` option, else AWS_REGION / AWS_DEFAULT_REGION. */
function s3Region(options: Record<string, unknown>, env: EnvLookup): string {
  const region = text(options, "region") ?? env("AWS_REGION") ?? env("AWS_DEFAULT_REGION");
  if (!region) throw new Error("no S3 region: set region (or AWS_REGION)");
  return region;
}

/** Check and resolve the options of a storage backend; throws an Error naming the problem. */
export function storageSettings(
  options: Record<string, unknown>,
  baseDir: string,
  env: EnvLookup = processEnv,
): StorageSettings {
  const rootText = text(options, "root");
  if (!rootText) throw new Error("missing required option `root`");
  const readSource = text(options, "read_pattern");
  const writeSource = text(options, "write_pattern");
  if (!readSource && !writeSource) throw new Error("set read_pattern, write_pattern, or both");
  const read = readSource ? parseTemplate(readSource, "read_pattern") : undefined;
  const generated = read?.names.filter((n) => GENERATED_NAMES.has(n)) ?? [];
  if (generated.length) {
    throw new Error(
      `read_pattern: {${
        generated[0]
      }} makes a new value per request and cannot find a stored object`,
    );
  }
  const write = writeSource ? parseTemplate(writeSource, "write_pattern") : undefined;
  let root: LocalRoot | S3Root;
  if (rootText.startsWith("s3://")) {
    const endpoint = text(options, "endpoint");
    root = {
      kind: "s3",
      ...parseS3Root(rootText),
      region: s3Region(options, env),
      ...(endpoint ? { endpoint } : {}),
      credentials: s3Credentials(options, env),
    };
  } else {
    root = { kind: "local", dir: localRootDir(rootText, baseDir) };
  }
  return { root, read, write };
}
