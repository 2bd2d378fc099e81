/**
 * Frames of an instance's pixel data (PS3.5 8.2 and A.4), as WADO-RS serves them (PS3.18 8.3.5.1):
 * - native (uncompressed) data is split by Rows x Columns x SamplesPerPixel x BitsAllocated bits
 *   per frame (a frame that does not start on a byte boundary, BitsAllocated 1, is shifted so it
 *   does; Explicit VR Big Endian words are swapped to little endian);
 * - encapsulated data has one frame per fragment set: the Basic Offset Table (or the Extended
 *   Offset Table) groups the fragments; without one, one fragment is one frame, a single-frame
 *   instance owns every fragment, and otherwise a fragment opening a JPEG or JPEG 2000 codestream
 *   starts the next frame.
 * The dataset is read with dcmjs (json.ts), which already applies the Basic Offset Table.
 */
import { binaryBytes, type DcmjsDict, readDataset } from "./json.ts";
import { parseP10 } from "./p10.ts";
import { isEncapsulated, TS } from "./uids.ts";

/** The pixel data of one instance, ready to be cut into frames. */
export interface PixelFrames {
  /** Transfer syntax of the instance (the frames are in it, except native big endian data). */
  transferSyntax: string;
  /** True for compressed (encapsulated) pixel data. */
  encapsulated: boolean;
  /** NumberOfFrames (1 when absent). */
  numberOfFrames: number;
  /** The bytes of frame `n` (1-based, at most `numberOfFrames`). */
  frame(n: number): Uint8Array;
}

/** The frame list of a WADO-RS frames URL is not one. */
export class FrameListError extends Error {}

/** The pixel data cannot be cut into frames (the instance is inconsistent). */
export class PixelDataError extends Error {}

/**
 * The frame numbers of a WADO-RS frame list: 1-based, separated by `,` (or `%2C`), no duplicates
 * (PS3.18 8.3.5.1). Throws FrameListError on anything else.
 */
export function parseFrameList(text: string): number[] {
  const items = text.split(/,|%2[cC]/);
  const out: number[] = [];
  for (const item of items) {
    if (!/^[0-9]{1,9}$/.test(item)) {
      throw new FrameListError(
        `malformed frame list \`${text}\`: expected frame numbers separated by commas`,
      );
    }
    const n = Number(item);
    if (n < 1) throw new FrameListError(`frame numbers start at 1, not ${item}`);
    if (out.includes(n)) throw new FrameListError(`frame ${n} is listed twice in \`${text}\``);
    out.push(n);
  }
  return out;
}

/** Pixel data elements, in the order an instance is searched for them. */
const PIXEL_TAGS = ["7FE00010", "7FE00008", "7FE00009"];

function number(dict: DcmjsDict, tag: string): number | undefined {
  const v = dict[tag]?.Value?.[0];
  const n = typeof v === "string" ? Number(v.trim()) : typeof v === "number" ? v : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** Read the pixel data of a Part 10 file; undefined when it has none. */
export function pixelFramesOf(file: Uint8Array): PixelFrames | undefined {
  const p10 = parseP10(file);
  const ts = p10.meta.transferSyntax;
  if (ts === TS.deflatedLE) {
    throw new PixelDataError("frames of Deflated Explicit VR Little Endian data are not supported");
  }
  return pixelFramesOfDataset(readDataset(p10.dataset, ts), ts);
}

/** The frames of a dataset already read (see {@link pixelFramesOf}). */
export function pixelFramesOfDataset(
  dict: DcmjsDict,
  transferSyntax: string,
): PixelFrames | undefined {
  const tag = PIXEL_TAGS.find((t) => dict[t]?.Value !== undefined);
  if (!tag) return undefined;
  const values = (dict[tag].Value ?? []) as unknown[];
  const numberOfFrames = number(dict, "00280008") ?? 1;
  if (!Number.isInteger(numberOfFrames) || numberOfFrames < 1) {
    throw new PixelDataError(`NumberOfFrames ${numberOfFrames} is not a positive integer`);
  }
  const encapsulated = tag === "7FE00010" && isEncapsulated(transferSyntax);
  const frames = encapsulated
    ? encapsulatedFrames(
      values.map((v) => binaryBytes([v])),
      numberOfFrames,
      dict["7FE00001"]?.Value,
    )
    : nativeFrames(dict, tag, binaryBytes(values), numberOfFrames, transferSyntax);
  return {
    transferSyntax,
    encapsulated,
    numberOfFrames,
    frame(n: number): Uint8Array {
      if (!Number.isInteger(n) || n < 1 || n > numberOfFrames) {
        throw new RangeError(`frame ${n} is not in 1..${numberOfFrames}`);
      }
      return frames(n - 1);
    },
  };
}

/** Frame cutter of native pixel data. */
function nativeFrames(
  dict: DcmjsDict,
  tag: string,
  pixels: Uint8Array,
  count: number,
  transferSyntax: string,
): (index: number) => Uint8Array {
  const defaultBits = tag === "7FE00009" ? 64 : tag === "7FE00008" ? 32 : undefined;
  const rows = number(dict, "00280010");
  const columns = number(dict, "00280011");
  const samples = number(dict, "00280002") ?? 1;
  const bits = number(dict, "00280100") ?? defaultBits;
  if (!rows || !columns || !bits) {
    throw new PixelDataError("the instance lacks Rows, Columns or BitsAllocated");
  }
  const frameBits = rows * columns * samples * bits;
  const needed = Math.ceil((frameBits * count) / 8);
  if (pixels.length < needed) {
    throw new PixelDataError(
      `pixel data holds ${pixels.length} bytes, ${count} frame(s) of ${rows}x${columns}x${samples} ` +
        `at ${bits} bits need ${needed}`,
    );
  }
  const swap = transferSyntax === TS.explicitBE && bits > 8 ? bits / 8 : 0;
  return (index) => {
    const frame = bitSlice(pixels, index * frameBits, frameBits);
    return swap ? swapped(frame, swap) : frame;
  };
}

/** `length` bits of `bytes` from bit `start` (bits are LSB first), starting on a byte boundary. */
function bitSlice(bytes: Uint8Array, start: number, length: number): Uint8Array {
  const size = Math.ceil(length / 8);
  const shift = start % 8;
  const first = (start - shift) / 8;
  if (shift === 0) {
    if (length % 8 === 0) return bytes.subarray(first, first + size);
    const out = bytes.slice(first, first + size);
    out[size - 1] &= (1 << (length % 8)) - 1;
    return out;
  }
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) {
    out[i] = (bytes[first + i] >> shift) | ((bytes[first + i + 1] ?? 0) << (8 - shift));
  }
  if (length % 8) out[size - 1] &= (1 << (length % 8)) - 1;
  return out;
}

/** A copy with every `width`-byte word reversed (big endian -> little endian). */
function swapped(bytes: Uint8Array, width: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i + width <= bytes.length; i += width) {
    for (let j = 0; j < width; j++) out[i + j] = bytes[i + width - 1 - j];
  }
  return out;
}

/** True when a fragment opens a JPEG (SOI), JPEG-LS (SOI) or JPEG 2000 (SOC or jP box) stream. */
function opensCodestream(f: Uint8Array): boolean {
  if (f[0] === 0xff && f[1] === 0xd8 && f[2] === 0xff) return true; // JPEG, JPEG-LS
  if (f[0] === 0xff && f[1] === 0x4f && f[2] === 0xff && f[3] === 0x51) return true; // J2K
  return f[4] === 0x6a && f[5] === 0x50 && f[6] === 0x20 && f[7] === 0x20; // JP2 signature box
}

/** Offsets of the Extended Offset Table (OV, 64-bit little endian), if any. */
function extendedOffsets(value: unknown[] | undefined): number[] | undefined {
  const bytes = binaryBytes(value ?? []);
  if (bytes.length < 8) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let at = 0; at + 8 <= bytes.length; at += 8) {
    out.push(Number(view.getBigUint64(at, true)));
  }
  return out;
}

/** Group fragments into frames at item offsets (relative to the first fragment's item tag). */
function groupAtOffsets(fragments: Uint8Array[], offsets: number[]): Uint8Array[][] {
  const groups: Uint8Array[][] = offsets.map(() => []);
  let at = 0;
  let g = -1;
  for (const f of fragments) {
    while (g + 1 < offsets.length && offsets[g + 1] <= at) g++;
    if (g < 0 || offsets[g] > at) throw new PixelDataError("offset table does not match fragments");
    groups[g].push(f);
    at += 8 + f.length;
  }
  if (groups.some((x) => x.length === 0)) {
    throw new PixelDataError("offset table points past the fragments");
  }
  return groups;
}

/** Group fragments by the codestream each one opens. */
function groupByCodestream(fragments: Uint8Array[]): Uint8Array[][] {
  const groups: Uint8Array[][] = [];
  for (const f of fragments) {
    if (groups.length === 0 || opensCodestream(f)) groups.push([f]);
    else groups[groups.length - 1].push(f);
  }
  return groups;
}

/**
 * Frame cutter of encapsulated pixel data. `items` are what dcmjs read: one per frame when the
 * Basic Offset Table was there, else one per fragment.
 */
function encapsulatedFrames(
  items: Uint8Array[],
  count: number,
  extendedTable: unknown[] | undefined,
): (index: number) => Uint8Array {
  let groups: Uint8Array[][];
  const eot = extendedOffsets(extendedTable);
  if (items.length === count) groups = items.map((i) => [i]);
  else if (count === 1) groups = [items];
  else if (eot && eot.length === count) groups = groupAtOffsets(items, eot);
  else groups = groupByCodestream(items);
  if (groups.length !== count) {
    throw new PixelDataError(
      `cannot find the boundaries of ${count} frame(s) in ${items.length} fragment(s) ` +
        "(no offset table, fragments do not start codestreams)",
    );
  }
  return (index) => binaryBytes(groups[index]);
}
