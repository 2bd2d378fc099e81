/**
 * The rendering worker: receives {@link RenderJob}s from pool.ts, answers the encoded image or the
 * error. Rendering runs here, off the gateway's event loop: decoding and encoding a large frame
 * takes long enough to stall every other request if it ran on the main thread.
 */
import { encodeRaster } from "./encode.ts";
import { renderRaster } from "./image.ts";
import { RenderError, type RenderJob } from "./job.ts";

/** A job as posted to the worker. */
export interface WorkerRequest {
  id: number;
  job: RenderJob;
}

/** The worker's answer. */
export type WorkerResponse =
  | { id: number; bytes: Uint8Array }
  | { id: number; error: { status: number; message: string } };

/** Render and encode one job (also usable without a worker, in tests). */
export function runJob(job: RenderJob): Uint8Array {
  const raster = renderRaster(job);
  return encodeRaster(raster, job.params.type, job.params.quality);
}

// Only when loaded as a worker (a module has no `onmessage` target otherwise worth setting).
const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
  postMessage?: (message: WorkerResponse, transfer?: Transferable[]) => void;
  WorkerGlobalScope?: unknown;
};
if (typeof scope.WorkerGlobalScope !== "undefined") {
  scope.onmessage = (e) => {
    const { id, job } = e.data;
    try {
      const bytes = runJob(job);
      scope.postMessage!({ id, bytes }, [bytes.buffer as ArrayBuffer]);
    } catch (err) {
      const status = err instanceof RenderError ? err.status : 502;
      scope.postMessage!({ id, error: { status, message: (err as Error).message } });
    }
  };
}
