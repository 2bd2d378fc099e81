/**
 * The `storage` backend: objects in a local directory or an S3 bucket, addressed by path
 * templates. Public face of `gateway/backends/storage/`.
 *
 * @example
 * ```ts
 * import { pathProblem } from "./mod.ts";
 *
 * // Object keys come from requests: anything that could leave the root is refused, with the reason.
 * console.log(pathProblem("studies/1.2.3/report.json")); // null: fine
 * console.log(pathProblem("/etc/passwd")); // is absolute (starts with `/`)
 * ```
 *
 * @module
 */
import type { BackendConfig } from "../../../shared/gateway_config/mod.ts";
import type { Backend, BuildContext } from "../../pipeline/mod.ts";
import { StorageBackend } from "./backend.ts";
import { LocalStore } from "./local_store.ts";
import { type EnvLookup, processEnv, storageSettings } from "./options.ts";
import { sweepOnce } from "./stale_temporaries.ts";
import type { ObjectStore } from "./store.ts";

export { DEFAULT_CONTENT_TYPE, StorageBackend } from "./backend.ts";
export { LocalStore } from "./local_store.ts";
export { ReceivedFile } from "./received_file.ts";
export { type StorageSettings, storageSettings } from "./options.ts";
export { pathProblem } from "./path_rules.ts";
export { isTemporaryName, sweepOnce, sweepStaleTemporaries } from "./stale_temporaries.ts";
export { parseTemplate, resolveTemplate } from "./template.ts";
export type { ObjectInfo, ObjectStore, WriteResult } from "./store.ts";

/** Build a `storage` backend (the S3 client is loaded only for `s3://` roots). */
export async function createStorageBackend(
  config: BackendConfig,
  ctx: BuildContext,
  env: EnvLookup = processEnv,
): Promise<Backend> {
  let settings;
  try {
    settings = storageSettings(config.options, ctx.baseDir, env);
  } catch (err) {
    throw new Error(`backend ${config.name}: ${(err as Error).message}`, { cause: err });
  }
  let store: ObjectStore;
  if (settings.root.kind === "s3") {
    const { S3Store } = await import("./s3_store.ts");
    store = new S3Store(settings.root);
  } else {
    store = new LocalStore(settings.root.dir);
  }
  const logger = ctx.logger.child({ backend: config.name });
  if (!ctx.validateOnly) {
    logger.debug("storage backend ready", { store: store.description });
    if (store instanceof LocalStore) sweepOnce(store.root, logger);
  }
  return new StorageBackend(config, settings, store, logger);
}
export { KeyedLock } from "./keyed_lock.ts";
