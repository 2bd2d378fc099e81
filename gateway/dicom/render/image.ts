/**
 * Rendering one frame as a displayable image (PS3.18 8.3.5.1, PS3.3 C.11): decode the samples
 * (native 1, 8 or 16 bits; JPEG baseline through `jpeg-js`; JPEG lossless, processes 14 and 14
 * SV1, through `jpeg-lossless-decoder-js`), apply the Modality LUT (rescale slope and intercept)
 * and a VOI window (the request's, else the dataset's first WindowCenter/WindowWidth, else the
 * frame's value range) to grayscale, invert MONOCHROME1, convert YBR_FULL to RGB, and scale to the
 * viewport. What cannot be rendered (other compressions, palette color, 32-bit samples) is a
 * {@link RenderError} with status 406; undecodable data is 502. Linear in the pixels.
 */
import jpeg from "jpeg-js";
import { Decoder as LosslessDecoder } from "jpeg-lossless-decoder-js";
import {
  type ImageAttributes,
  type Raster,
  RENDERABLE_COMPRESSED,
  RenderError,
  type RenderJob,
} from "./job.ts";
import type { VoiFunction, VoiWindow } from "./params.ts";

/** Largest frame rendered, in pixels (a 10k x 10k slide tile is refused). */
const MAX_PIXELS = 64 * 1024 * 1024;

/** Decoded samples before the VOI: one value per channel and pixel. */
interface Samples {
  width: number;
  height: number;
  channels: 1 | 3;
  values: ArrayLike<number>;
  /** True when `values` are RGB already (8-bit color). */
  color: boolean;
}

function unrenderable(message: string): RenderError {
  return new RenderError(406, message);
}

/** Native samples as numbers, masked to BitsStored and sign-extended when signed. */
function nativeValues(frame: Uint8Array, img: ImageAttributes, count: number): Int32Array {
  const out = new Int32Array(count);
  const bits = img.bitsAllocated;
  if (bits === 1) {
    if (frame.length * 8 < count) throw new RenderError(502, "pixel data shorter than the frame");
    for (let i = 0; i < count; i++) out[i] = (frame[i >> 3] >> (i & 7)) & 1;
    return out;
  }
  const bytes = bits / 8;
  if (frame.length < count * bytes) throw new RenderError(502, "pixel data shorter than the frame");
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  for (let i = 0; i < count; i++) {
    out[i] = bits === 8 ? frame[i] : view.getUint16(i * 2, true);
  }
  return normalize(out, img);
}

/** Mask raw sample words to BitsStored (below HighBit) and sign-extend signed ones, in place. */
function normalize(values: Int32Array, img: ImageAttributes): Int32Array {
  const stored = Math.min(img.bitsStored || img.bitsAllocated, 16);
  // A HighBit past the sample word (a broken header) is read as BitsStored - 1.
  const top = Math.min((img.highBit ?? stored - 1) + 1, img.bitsAllocated);
  const shift = Math.max(0, top - stored);
  const mask = (1 << stored) - 1;
  const sign = 1 << (stored - 1);
  for (let i = 0; i < values.length; i++) {
    let v = (values[i] >> shift) & mask;
    if (img.pixelRepresentation === 1 && v & sign) v -= 1 << stored;
    values[i] = v;
  }
  return values;
}

function decodeJpegBaseline(job: RenderJob): Samples {
  const { image: img } = job;
  let decoded: { width: number; height: number; data: Uint8Array };
  try {
    decoded = jpeg.decode(job.frame, {
      useTArray: true,
      formatAsRGBA: false,
      colorTransform: img.samplesPerPixel === 3 ? img.photometric.startsWith("YBR") : undefined,
      maxResolutionInMP: MAX_PIXELS / 1_000_000,
      maxMemoryUsageInMB: 1024,
    });
  } catch (err) {
    throw new RenderError(502, `JPEG data cannot be decoded: ${(err as Error).message}`);
  }
  // jpeg-js answers three channels even for one component: keep one for grayscale.
  const pixels = decoded.width * decoded.height;
  if (img.samplesPerPixel !== 3) {
    const gray = new Uint8Array(pixels);
    for (let i = 0; i < pixels; i++) gray[i] = decoded.data[i * 3];
    return {
      width: decoded.width,
      height: decoded.height,
      channels: 1,
      values: gray,
      color: false,
    };
  }
  return {
    width: decoded.width,
    height: decoded.height,
    channels: 3,
    values: decoded.data,
    color: true,
  };
}

function decodeJpegLossless(job: RenderJob): Samples {
  const { frame, image: img } = job;
  let decoded: Uint8Array | Uint16Array;
  try {
    const copy = frame.slice();
    decoded = new LosslessDecoder().decode(copy.buffer, 0, copy.byteLength) as
      | Uint8Array
      | Uint16Array;
  } catch (err) {
    throw new RenderError(502, `JPEG lossless data cannot be decoded: ${(err as Error).message}`);
  }
  const count = img.rows * img.columns * img.samplesPerPixel;
  if (decoded.length < count) {
    throw new RenderError(502, "JPEG lossless frame smaller than Rows x Columns");
  }
  const values = normalize(Int32Array.from(decoded.subarray(0, count)), img);
  return {
    width: img.columns,
    height: img.rows,
    channels: img.samplesPerPixel === 3 ? 3 : 1,
    values,
    color: img.samplesPerPixel === 3,
  };
}

function decodeNative(job: RenderJob): Samples {
  const { image: img } = job;
  if (![1, 8, 16].includes(img.bitsAllocated)) {
    throw unrenderable(`${img.bitsAllocated}-bit samples cannot be rendered (1, 8 or 16)`);
  }
  const pixels = img.rows * img.columns;
  if (img.samplesPerPixel === 1) {
    const values = nativeValues(job.frame, img, pixels);
    return { width: img.columns, height: img.rows, channels: 1, values, color: false };
  }
  const raw = nativeValues(job.frame, img, pixels * 3);
  // Planar configuration 1: RRR...GGG...BBB; interleave it.
  let values = raw;
  if (img.planarConfiguration === 1) {
    values = new Int32Array(raw.length);
    for (let i = 0; i < pixels; i++) {
      values[i * 3] = raw[i];
      values[i * 3 + 1] = raw[pixels + i];
      values[i * 3 + 2] = raw[2 * pixels + i];
    }
  }
  return { width: img.columns, height: img.rows, channels: 3, values, color: true };
}

function decodeSamples(job: RenderJob): Samples {
  const img = job.image;
  if (!(img.rows > 0 && img.columns > 0)) throw new RenderError(502, "Rows or Columns missing");
  if (img.rows * img.columns > MAX_PIXELS) {
    throw unrenderable(`a ${img.columns}x${img.rows} frame is over the ${MAX_PIXELS}-pixel limit`);
  }
  const photometric = img.photometric;
  const supported = img.samplesPerPixel === 1
    ? ["MONOCHROME1", "MONOCHROME2"].includes(photometric)
    : img.samplesPerPixel === 3 &&
      (["RGB", "YBR_FULL"].includes(photometric) ||
        (job.encapsulated && photometric.startsWith("YBR")));
  if (!supported) {
    throw unrenderable(
      `photometric interpretation ${photometric || "(none)"} with ${img.samplesPerPixel} ` +
        "sample(s) per pixel cannot be rendered (MONOCHROME1/2, RGB and YBR_FULL can)",
    );
  }
  if (!job.encapsulated) return decodeNative(job);
  if (job.transferSyntax === RENDERABLE_COMPRESSED[0]) return decodeJpegBaseline(job);
  if (RENDERABLE_COMPRESSED.includes(job.transferSyntax)) return decodeJpegLossless(job);
  throw unrenderable(
    `frames in transfer syntax ${job.transferSyntax} cannot be rendered here; uncompressed, ` +
      "JPEG baseline and JPEG lossless ones can",
  );
}

/** Maps a modality value to 0..255 through the window (PS3.3 C.11.2.1.2). */
function voiMapper(w: VoiWindow): (x: number) => number {
  const { center: c, width: wd } = w;
  const fn: VoiFunction = w.fn;
  if (fn === "sigmoid") return (x) => 255 / (1 + Math.exp((-4 * (x - c)) / wd));
  if (fn === "linear-exact") {
    return (x) => x <= c - wd / 2 ? 0 : x > c + wd / 2 ? 255 : ((x - c) / wd + 0.5) * 255;
  }
  const low = c - 0.5 - (wd - 1) / 2;
  const high = c - 0.5 + (wd - 1) / 2;
  return (x) => x <= low ? 0 : x > high ? 255 : ((x - (c - 0.5)) / (wd - 1) + 0.5) * 255;
}

function grayscale(s: Samples, img: ImageAttributes, requested?: VoiWindow): Uint8Array {
  const n = s.width * s.height;
  const slope = img.rescaleSlope || 1;
  const intercept = img.rescaleIntercept || 0;
  let window = requested ?? img.window;
  if (!window) {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      const v = s.values[i] * slope + intercept;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    window = { center: (min + max) / 2, width: Math.max(max - min, 1), fn: "linear-exact" };
  }
  const map = voiMapper(window);
  const invert = img.photometric === "MONOCHROME1";
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const y = Math.round(map(s.values[i] * slope + intercept));
    out[i] = invert ? 255 - y : y;
  }
  return out;
}

function rgb(s: Samples, img: ImageAttributes, decodedByJpeg: boolean): Uint8Array {
  const n = s.width * s.height * 3;
  const out = new Uint8Array(n);
  const shift = decodedByJpeg ? 0 : Math.max(0, (img.bitsStored || 8) - 8);
  for (let i = 0; i < n; i++) out[i] = Math.max(0, Math.min(255, s.values[i] >> shift));
  // Native YBR_FULL (PS3.3 C.7.6.3.1.2): to RGB. JPEG decoders already converted theirs.
  if (img.photometric === "YBR_FULL" && !decodedByJpeg) {
    for (let i = 0; i < n; i += 3) {
      const y = out[i], cb = out[i + 1] - 128, cr = out[i + 2] - 128;
      out[i] = clamp(y + 1.402 * cr);
      out[i + 1] = clamp(y - 0.344136 * cb - 0.714136 * cr);
      out[i + 2] = clamp(y + 1.772 * cb);
    }
  }
  return out;
}

function clamp(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
}

/** Scales `r` to fit `box` keeping its aspect ratio: area averaging down, nearest pixel up. */
export function fitTo(
  r: Raster,
  box: { width: number; height: number; shrinkOnly?: boolean },
): Raster {
  let scale = Math.min(box.width / r.width, box.height / r.height);
  if (box.shrinkOnly) scale = Math.min(scale, 1);
  const width = Math.max(1, Math.round(r.width * scale));
  const height = Math.max(1, Math.round(r.height * scale));
  if (width === r.width && height === r.height) return r;
  const ch = r.channels;
  const out = new Uint8Array(width * height * ch);
  const sx = r.width / width;
  const sy = r.height / height;
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor(y * sy);
    const y1 = Math.max(y0 + 1, Math.min(r.height, Math.floor((y + 1) * sy)));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor(x * sx);
      const x1 = Math.max(x0 + 1, Math.min(r.width, Math.floor((x + 1) * sx)));
      const count = (y1 - y0) * (x1 - x0);
      for (let c = 0; c < ch; c++) {
        let sum = 0;
        for (let yy = y0; yy < y1; yy++) {
          for (let xx = x0; xx < x1; xx++) sum += r.data[(yy * r.width + xx) * ch + c];
        }
        out[(y * width + x) * ch + c] = Math.round(sum / count);
      }
    }
  }
  return { width, height, channels: ch, data: out };
}

/** The frame of `job` as an 8-bit raster, scaled to its viewport. */
export function renderRaster(job: RenderJob): Raster {
  const samples = decodeSamples(job);
  const raster: Raster = samples.color
    ? {
      width: samples.width,
      height: samples.height,
      channels: 3,
      data: rgb(
        samples,
        job.image,
        job.encapsulated && job.transferSyntax === RENDERABLE_COMPRESSED[0],
      ),
    }
    : {
      width: samples.width,
      height: samples.height,
      channels: 1,
      data: grayscale(samples, job.image, job.params.window),
    };
  return job.params.viewport ? fitTo(raster, job.params.viewport) : raster;
}
