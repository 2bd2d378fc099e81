/**
 * A walk over the top-level elements of encoded dataset bytes that decodes nothing but what it is
 * asked for: where Pixel Data starts (so only the header is handed to a full parser) and the text
 * values of a few elements (the UIDs and identifiers a received instance is routed and stored by).
 * Sequences are skipped by their lengths or delimiters, pixel data is never touched.
 */

import {
  ITEM_END_TAG,
  ITEM_TAG,
  LONG_VRS,
  MAX_SEQUENCE_DEPTH,
  SEQUENCE_END_TAG,
  UNDEFINED_LENGTH,
} from "../../dicom/mod.ts";

/** Implicit VR Little Endian. */
const IMPLICIT_LE = "1.2.840.10008.1.2";
/** Explicit VR Big Endian (retired). */
const EXPLICIT_BE = "1.2.840.10008.1.2.2";
/** Deflated Explicit VR Little Endian: the dataset is compressed as a whole. */
const DEFLATED_LE = "1.2.840.10008.1.2.1.99";

/** Pixel Data (7FE0,0010). */
export const PIXEL_DATA = 0x7fe00010;
/** Specific Character Set (0008,0005). */
const CHARSET = 0x00080005;

const UNDEFINED = UNDEFINED_LENGTH;
const ITEM = ITEM_TAG;
const ITEM_END = ITEM_END_TAG;
const SEQUENCE_END = SEQUENCE_END_TAG;

/** How a dataset is encoded. */
interface Encoding {
  explicit: boolean;
  little: boolean;
}

/** The encoding of a transfer syntax, or undefined when its bytes cannot be walked (deflate). */
function encodingOf(transferSyntax: string): Encoding | undefined {
  if (transferSyntax === DEFLATED_LE) return undefined;
  if (transferSyntax === IMPLICIT_LE) return { explicit: false, little: true };
  return { explicit: true, little: transferSyntax !== EXPLICIT_BE };
}

/** One element header. */
interface Element {
  tag: number;
  vr: string;
  length: number;
  /** Offset of the value. */
  value: number;
}

/** A cursor over encoded elements. */
class Walker {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  readonly little: boolean;

  constructor(bytes: Uint8Array, little: boolean) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.little = little;
  }

  /** The element header at `at`, or undefined when it is truncated. */
  element(at: number, explicit: boolean): Element | undefined {
    const { view, little, bytes } = this;
    if (at + 8 > bytes.byteLength) return undefined;
    const tag = view.getUint16(at, little) * 0x10000 + view.getUint16(at + 2, little);
    // Items and delimiters never carry a VR.
    if (!explicit || tag >= 0xfffe0000) {
      return { tag, vr: "", length: view.getUint32(at + 4, little), value: at + 8 };
    }
    const vr = String.fromCharCode(bytes[at + 4], bytes[at + 5]);
    if (LONG_VRS.has(vr)) {
      if (at + 12 > bytes.byteLength) return undefined;
      return { tag, vr, length: view.getUint32(at + 8, little), value: at + 12 };
    }
    return { tag, vr, length: view.getUint16(at + 6, little), value: at + 8 };
  }

  /**
   * The offset after an element's value; undefined-length values are walked to their delimiter,
   * up to {@link MAX_SEQUENCE_DEPTH} sequences deep (deeper: undefined, as bytes that cannot be
   * walked; the decoder refuses them).
   */
  skip(e: Element, explicit: boolean, depth = 1): number | undefined {
    if (e.length !== UNDEFINED) return e.value + e.length;
    if (depth > MAX_SEQUENCE_DEPTH) return undefined;
    // A sequence (or UN holding one, whose items are Implicit VR Little Endian).
    const itemsExplicit = explicit && e.vr !== "UN";
    let at = e.value;
    while (true) {
      const item = this.element(at, false);
      if (!item) return undefined;
      if (item.tag === SEQUENCE_END) return item.value;
      if (item.tag !== ITEM) return undefined;
      if (item.length !== UNDEFINED) {
        at = item.value + item.length;
        continue;
      }
      const end = this.#itemEnd(item.value, itemsExplicit, depth);
      if (end === undefined) return undefined;
      at = end;
    }
  }

  /** The offset after the item delimiter of an undefined-length item starting at `at`. */
  #itemEnd(at: number, explicit: boolean, depth: number): number | undefined {
    while (true) {
      const e = this.element(at, explicit);
      if (!e) return undefined;
      if (e.tag === ITEM_END) return e.value;
      const next = this.skip(e, explicit, depth + 1);
      if (next === undefined) return undefined;
      at = next;
    }
  }
}

/** The result of a header scan. */
export interface HeaderScan {
  /**
   * Offset of the Pixel Data element, or the dataset's length when it has none; undefined when
   * the walk stopped early.
   */
  headerEnd?: number;
  /** The first value of each wanted element that is present (padding removed). */
  values: Map<number, string>;
}

/**
 * Walk the top-level elements of `bytes` up to Pixel Data, collecting the first text value of the
 * `wanted` tags (numbers such as 0x0020000d). Stops early once past the last wanted tag when
 * `toPixelData` is false. Undefined when the bytes cannot be walked (deflated, truncated, or a
 * value in a character set other than ASCII, Latin-1 or UTF-8).
 */
export function scanHeader(
  bytes: Uint8Array,
  transferSyntax: string,
  wanted: readonly number[],
  toPixelData = true,
): HeaderScan | undefined {
  const encoding = encodingOf(transferSyntax);
  if (!encoding) return undefined;
  const walker = new Walker(bytes, encoding.little);
  const want = new Set(wanted);
  const last = Math.max(0, ...wanted);
  const raw = new Map<number, Uint8Array>();
  let charset = "";
  let at = 0;
  while (at < bytes.byteLength) {
    const e = walker.element(at, encoding.explicit);
    if (!e) return undefined;
    if (e.tag >= PIXEL_DATA) {
      return finish(e.tag === PIXEL_DATA ? at : bytes.byteLength);
    }
    if (!toPixelData && e.tag > last) return finish(undefined);
    if (e.length !== UNDEFINED && e.value + e.length > bytes.byteLength) return undefined;
    if (e.tag === CHARSET) charset = latin1(bytes.subarray(e.value, e.value + e.length));
    if (want.has(e.tag) && e.length !== UNDEFINED) {
      raw.set(e.tag, bytes.subarray(e.value, e.value + e.length));
    }
    const next = walker.skip(e, encoding.explicit);
    if (next === undefined) return undefined;
    at = next;
  }
  return finish(bytes.byteLength);

  function finish(headerEnd: number | undefined): HeaderScan | undefined {
    const values = new Map<number, string>();
    for (const [tag, value] of raw) {
      const decoded = decodeText(value, charset);
      if (decoded === undefined) return undefined;
      const first = decoded.split("\\")[0].replace(/[\0 ]+$/, "").replace(/^ +/, "");
      if (first) values.set(tag, first);
    }
    return { headerEnd, values };
  }
}

const LATIN1 = new TextDecoder("latin1");
const UTF8 = new TextDecoder("utf-8");

function latin1(bytes: Uint8Array): string {
  return LATIN1.decode(bytes).replace(/[\0 ]+$/, "").trim();
}

/** Text in the dataset's character set; undefined for non-ASCII bytes in other character sets. */
function decodeText(bytes: Uint8Array, charset: string): string | undefined {
  if (bytes.every((b) => b < 0x80)) return LATIN1.decode(bytes);
  const first = charset.split("\\")[0].trim();
  if (first === "ISO_IR 192") return UTF8.decode(bytes);
  if (first === "" || first === "ISO_IR 100") return LATIN1.decode(bytes);
  return undefined;
}
