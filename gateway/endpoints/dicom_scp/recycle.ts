/**
 * Which pipelines let go of a received instance's bytes when they finish, so the listener may
 * receive the association's next instance into the same memory (no fresh allocation, no page
 * faults, far fewer garbage collections). Only pipelines made of parts known not to keep a request
 * body after their call: `echo` (its answer, the header's DICOM JSON and a hash, is built only when
 * read, and the endpoint drops a C-STORE's answer unread before reusing the bytes) and `dicom_scu`
 * (the PACS has received the whole dataset when it answers) backends, `transform` and
 * `metadata_transform` middleware; and no tee that could still be running after the primary
 * answers (one backend, or every backend `required`, which the executor waits for). Anything else
 * (HTTP-family, storage, future types) may hold the bytes and gets fresh memory per instance.
 */
import { MetadataTransformMiddleware, TransformMiddleware } from "../../middleware/mod.ts";
import type { BuiltPipeline } from "../../pipeline/mod.ts";

const RELEASING_BACKENDS: ReadonlySet<string> = new Set(["echo", "dicom_scu"]);

/** True when nothing in `pipeline` refers to a request body once the pipeline has finished. */
export function releasesBodies(pipeline: BuiltPipeline): boolean {
  const backends = pipeline.backends;
  if (!backends.every((b) => RELEASING_BACKENDS.has(b.config.service))) return false;
  if (backends.length > 1 && !backends.every((b) => b.config.required)) return false;
  return pipeline.middleware.every((m) =>
    m instanceof TransformMiddleware || m instanceof MetadataTransformMiddleware
  );
}
