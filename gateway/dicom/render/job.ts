/**
 * What a rendering is given and gives back, and its errors: what the gateway's side (pool.ts, the
 * DIMSE bridge) needs without the image codecs, which only the rendering worker loads (image.ts,
 * encode.ts).
 */
import type { RenderParams, VoiWindow } from "./params.ts";

/** The Image Pixel module attributes a rendering needs (read from the dataset by the caller). */
export interface ImageAttributes {
  rows: number;
  columns: number;
  samplesPerPixel: number;
  bitsAllocated: number;
  bitsStored: number;
  highBit: number;
  /** 1: signed samples. */
  pixelRepresentation: number;
  photometric: string;
  planarConfiguration: number;
  rescaleSlope: number;
  rescaleIntercept: number;
  /** The dataset's first window, when it has one. */
  window?: VoiWindow;
}

/** One frame to render. */
export interface RenderJob {
  /** The frame: native little-endian samples, or the compressed bitstream. */
  frame: Uint8Array;
  transferSyntax: string;
  encapsulated: boolean;
  image: ImageAttributes;
  params: RenderParams;
}

/** An 8-bit raster: 1 (gray) or 3 (RGB) channels, interleaved. */
export interface Raster {
  width: number;
  height: number;
  channels: 1 | 3;
  data: Uint8Array;
}

/** A frame that cannot be rendered (406) or whose data cannot be decoded (502). */
export class RenderError extends Error {
  constructor(readonly status: 406 | 502, message: string) {
    super(message);
  }
}

/** The compressed syntaxes this renderer decodes (a C-GET for a rendering proposes these). */
export const RENDERABLE_COMPRESSED: readonly string[] = [
  "1.2.840.10008.1.2.4.50", // JPEG baseline (process 1)
  "1.2.840.10008.1.2.4.57", // JPEG lossless (process 14)
  "1.2.840.10008.1.2.4.70", // JPEG lossless, first-order prediction (process 14 SV1)
];
