/** The Image Pixel, Modality LUT and VOI LUT attributes of a dataset, as a rendering needs them. */
import type { DcmjsDict } from "../json.ts";
import type { ImageAttributes } from "./job.ts";
import type { VoiFunction } from "./params.ts";

function first(dict: DcmjsDict, tag: string): unknown {
  return dict[tag]?.Value?.[0];
}

function num(dict: DcmjsDict, tag: string): number | undefined {
  const v = first(dict, tag);
  const n = typeof v === "string" ? Number(v.trim()) : typeof v === "number" ? v : NaN;
  return Number.isFinite(n) ? n : undefined;
}

function text(dict: DcmjsDict, tag: string): string {
  const v = first(dict, tag);
  return typeof v === "string" ? v.replace(/\0/g, "").trim().toUpperCase() : "";
}

/** What renderRaster needs of `dict` (defaults where the dataset is silent). */
export function imageAttributesOf(dict: DcmjsDict): ImageAttributes {
  const bitsAllocated = num(dict, "00280100") ?? 8;
  const bitsStored = num(dict, "00280101") ?? bitsAllocated;
  const attrs: ImageAttributes = {
    rows: num(dict, "00280010") ?? 0,
    columns: num(dict, "00280011") ?? 0,
    samplesPerPixel: num(dict, "00280002") ?? 1,
    bitsAllocated,
    bitsStored,
    highBit: num(dict, "00280102") ?? bitsStored - 1,
    pixelRepresentation: num(dict, "00280103") ?? 0,
    photometric: text(dict, "00280004") || "MONOCHROME2",
    planarConfiguration: num(dict, "00280006") ?? 0,
    rescaleSlope: num(dict, "00281053") ?? 1,
    rescaleIntercept: num(dict, "00281052") ?? 0,
  };
  const center = num(dict, "00281050");
  const width = num(dict, "00281051");
  if (center !== undefined && width !== undefined && width > 0) {
    const fn = text(dict, "00281056").toLowerCase().replace("_", "-");
    attrs.window = {
      center,
      width: Math.max(width, 1),
      fn: (["linear-exact", "sigmoid"].includes(fn) ? fn : "linear") as VoiFunction,
    };
  }
  return attrs;
}
