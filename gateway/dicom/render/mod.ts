/**
 * WADO-RS rendered and thumbnail resources (PS3.18 8.3.5, 10.4.1.1.3-4) for the DIMSE bridge: the
 * request's parameters, and one frame rendered as `image/jpeg` or `image/png` in a worker thread.
 *
 * @example
 * ```ts
 * import { renderParamsOf } from "./mod.ts";
 *
 * const params = renderParamsOf(new URLSearchParams("window=40,400&quality=80"), "image/png", false);
 * console.log(params.type, params.window?.width); // image/png 400
 * ```
 *
 * @module
 */
export { imageAttributesOf } from "./attributes.ts";
export {
  type ImageAttributes,
  type Raster,
  RENDERABLE_COMPRESSED,
  RenderError,
  type RenderJob,
} from "./job.ts";
export {
  RENDERED_TYPES,
  type RenderedType,
  type RenderParams,
  renderParamsOf,
  THUMBNAIL_SIZE,
  type VoiWindow,
} from "./params.ts";
// The decoding and encoding (image.ts, encode.ts: jpeg-js, jpeg-lossless-decoder-js, fast-png)
// run in the rendering worker (worker.ts) only: the gateway's isolates do not load the codecs.
export { renderInWorker, stopRenderWorkers } from "./pool.ts";
