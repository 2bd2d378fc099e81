/**
 * Encoding a rendered raster: JPEG through `jpeg-js` (which takes RGBA), PNG through `fast-png`
 * (8-bit gray or RGB). Both pure JavaScript.
 */
import jpeg from "jpeg-js";
import { encode as encodePng } from "fast-png";
import type { Raster } from "./job.ts";
import type { RenderedType } from "./params.ts";

/** The raster as `type` (JPEG at `quality`, 1-100). */
export function encodeRaster(r: Raster, type: RenderedType, quality: number): Uint8Array {
  if (type === "image/png") {
    return encodePng({
      width: r.width,
      height: r.height,
      data: r.data,
      depth: 8,
      channels: r.channels,
    });
  }
  const pixels = r.width * r.height;
  const rgba = new Uint8Array(pixels * 4);
  for (let i = 0; i < pixels; i++) {
    const o = i * 4;
    if (r.channels === 1) {
      rgba[o] = rgba[o + 1] = rgba[o + 2] = r.data[i];
    } else {
      rgba[o] = r.data[i * 3];
      rgba[o + 1] = r.data[i * 3 + 1];
      rgba[o + 2] = r.data[i * 3 + 2];
    }
    rgba[o + 3] = 255;
  }
  // A copy: jpeg-js answers a Buffer, which may be a view of Node's shared allocation pool.
  return new Uint8Array(
    jpeg.encode({ width: r.width, height: r.height, data: rgba }, quality).data,
  );
}
