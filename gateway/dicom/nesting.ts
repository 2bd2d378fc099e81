/**
 * How deep encoded dataset bytes nest sequences, found with a loop over element headers before a
 * decoder that recurses sees them. dcmjs decodes a sequence inside a sequence by recursion: a 3.6 MB
 * dataset of 100,000 nested sequences held the event loop 15.5 s and ended in "Maximum call stack
 * size exceeded"; 1,000 levels in 36 KB took 0.1 s. Real datasets nest a few levels (a Structured
 * Report some tens), so {@link MAX_SEQUENCE_DEPTH} is far above them.
 *
 * @module
 */

/** Deepest nesting of sequences a dataset may have. */
export const MAX_SEQUENCE_DEPTH = 64;

const IMPLICIT_LE = "1.2.840.10008.1.2";
const EXPLICIT_BE = "1.2.840.10008.1.2.2";
/** A value length of 0xFFFFFFFF: the value ends at its delimiter. */
export const UNDEFINED_LENGTH = 0xffffffff;
/** Item (FFFE,E000). */
export const ITEM_TAG = 0xfffee000;
/** Item Delimitation Item (FFFE,E00D). */
export const ITEM_END_TAG = 0xfffee00d;
/** Sequence Delimitation Item (FFFE,E0DD). */
export const SEQUENCE_END_TAG = 0xfffee0dd;
const UNDEFINED = UNDEFINED_LENGTH;
const ITEM = ITEM_TAG;
const ITEM_END = ITEM_END_TAG;
const SEQUENCE_END = SEQUENCE_END_TAG;
const PIXEL_DATA = 0x7fe00010;
/** Explicit VRs with a 2-byte reserved field and a 32-bit length (PS3.5 7.1.2). */
export const LONG_VRS: ReadonlySet<string> = new Set([
  "OB",
  "OD",
  "OF",
  "OL",
  "OV",
  "OW",
  "SQ",
  "SV",
  "UC",
  "UN",
  "UR",
  "UT",
  "UV",
]);

/** A container being walked: the items of a sequence, or the elements of an item. */
interface Frame {
  items: boolean;
  /** Where a defined-length container ends (undefined: at its delimiter). */
  end: number | undefined;
  /** Whether its elements carry explicit VRs. */
  explicit: boolean;
  /** Encapsulated pixel data: its items are fragments, skipped by their lengths. */
  fragments?: boolean;
}

/**
 * The depth of the deepest sequence in `bytes` (a dataset in `transferSyntax`, no preamble or
 * meta group), counting at most to `limit + 1`: past `limit` the walk stops. Malformed or
 * truncated bytes end the walk with the depth seen so far (the decoder reports them). Deflated
 * datasets cannot be walked: 0.
 */
export function sequenceDepth(
  bytes: Uint8Array,
  transferSyntax: string,
  limit = MAX_SEQUENCE_DEPTH,
): number {
  if (transferSyntax === "1.2.840.10008.1.2.1.99") return 0;
  const little = transferSyntax !== EXPLICIT_BE;
  const topExplicit = transferSyntax !== IMPLICIT_LE;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = bytes.byteLength;
  const stack: Frame[] = [];
  let sequences = 0;
  let deepest = 0;
  let at = 0;
  while (at + 8 <= length) {
    const top = stack[stack.length - 1];
    if (top?.end !== undefined && at >= top.end) {
      leave();
      continue;
    }
    const tag = view.getUint16(at, little) * 0x10000 + view.getUint16(at + 2, little);
    if (top?.items) {
      // Items and delimiters carry no VR.
      const itemLength = view.getUint32(at + 4, little);
      at += 8;
      if (tag === SEQUENCE_END) {
        leave();
      } else if (tag !== ITEM) {
        return deepest;
      } else if (top.fragments) {
        if (itemLength === UNDEFINED) return deepest;
        at += itemLength;
      } else {
        stack.push({
          items: false,
          end: itemLength === UNDEFINED ? undefined : at + itemLength,
          explicit: top.explicit,
        });
      }
      continue;
    }
    if (tag === ITEM_END && top) {
      stack.pop();
      at += 8;
      continue;
    }
    const explicit = top ? top.explicit : topExplicit;
    let vr = "";
    let valueLength: number;
    let value: number;
    if (!explicit || tag >= 0xfffe0000) {
      valueLength = view.getUint32(at + 4, little);
      value = at + 8;
    } else {
      vr = String.fromCharCode(bytes[at + 4], bytes[at + 5]);
      if (LONG_VRS.has(vr)) {
        if (at + 12 > length) return deepest;
        valueLength = view.getUint32(at + 8, little);
        value = at + 12;
      } else {
        valueLength = view.getUint16(at + 6, little);
        value = at + 8;
      }
    }
    if (tag === PIXEL_DATA && valueLength === UNDEFINED) {
      stack.push({ items: true, end: undefined, explicit, fragments: true });
      at = value;
      continue;
    }
    // A sequence: by its VR, by an undefined length, or (implicit VR, or UN) by a first item.
    const startsWithItem = value + 4 <= length &&
      view.getUint16(value, little) === 0xfffe && view.getUint16(value + 2, little) === 0xe000;
    if (
      vr === "SQ" || valueLength === UNDEFINED || ((vr === "" || vr === "UN") && startsWithItem)
    ) {
      sequences++;
      deepest = Math.max(deepest, sequences);
      if (deepest > limit) return deepest;
      stack.push({
        items: true,
        end: valueLength === UNDEFINED ? undefined : value + valueLength,
        // Items of UN are Implicit VR Little Endian.
        explicit: explicit && vr !== "UN",
      });
      at = value;
      continue;
    }
    at = value + valueLength;
  }
  return deepest;

  /** Leaves the innermost container (a sequence counts; an item and pixel fragments do not). */
  function leave(): void {
    const frame = stack.pop()!;
    if (frame.items && !frame.fragments) sequences--;
  }
}
