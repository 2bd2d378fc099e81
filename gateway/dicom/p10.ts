/**
 * DICOM Part 10 files: split a file into its meta information (group 0002, always Explicit VR
 * Little Endian) and the dataset bytes, and write a file around dataset bytes, with no parse or
 * copy of the dataset itself (pixel data passes through untouched).
 */

/** The meta information a P10 file carries. */
export interface P10Meta {
  transferSyntax: string;
  sopClassUid: string;
  sopInstanceUid: string;
  /** Implementation class UID of the writer, when present. */
  implementationClassUid?: string;
}

/** A P10 file split into meta information and dataset bytes. */
export interface P10File {
  meta: P10Meta;
  /** The dataset, encoded in `meta.transferSyntax` (a view into the file bytes). */
  dataset: Uint8Array;
}

/** Implementation class UID written into the files and associations of this gateway. */
export const IMPLEMENTATION_CLASS_UID = "2.25.31268979912027534602208000433625068376";
/** Implementation version name (at most 16 characters). */
export const IMPLEMENTATION_VERSION = "HCGATEWAY";

const DECODER = new TextDecoder();
const ENCODER = new TextEncoder();
const LONG_VRS = new Set(["OB", "OW", "OF", "SQ", "UT", "UN", "UC", "UR", "OD", "OL", "OV"]);

/** True when bytes start with the 128-byte preamble and `DICM`. */
export function isP10(bytes: Uint8Array): boolean {
  return bytes.length >= 132 && bytes[128] === 0x44 && bytes[129] === 0x49 &&
    bytes[130] === 0x43 && bytes[131] === 0x4d;
}

function text(bytes: Uint8Array): string {
  return DECODER.decode(bytes).replace(/[\0 ]+$/, "").trim();
}

/** Split a P10 file; throws on a file without preamble, meta group or transfer syntax. */
export function parseP10(bytes: Uint8Array): P10File {
  if (!isP10(bytes)) throw new Error("not a DICOM Part 10 file (no DICM preamble)");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 132;
  const values: Record<string, string> = {};
  while (at + 8 <= bytes.length && view.getUint16(at, true) === 0x0002) {
    const element = view.getUint16(at + 2, true);
    const vr = String.fromCharCode(bytes[at + 4], bytes[at + 5]);
    let length: number;
    let header: number;
    if (LONG_VRS.has(vr)) {
      length = view.getUint32(at + 8, true);
      header = 12;
    } else {
      length = view.getUint16(at + 6, true);
      header = 8;
    }
    const value = bytes.subarray(at + header, at + header + length);
    values[element.toString(16).padStart(4, "0")] = vr === "UI" || vr === "SH" || vr === "AE"
      ? text(value)
      : "";
    at += header + length;
  }
  const transferSyntax = values["0010"];
  if (!transferSyntax) throw new Error("DICOM file has no TransferSyntaxUID (0002,0010)");
  return {
    meta: {
      transferSyntax,
      sopClassUid: values["0002"] ?? "",
      sopInstanceUid: values["0003"] ?? "",
      implementationClassUid: values["0012"] || undefined,
    },
    dataset: bytes.subarray(at),
  };
}

function element(element: number, vr: string, value: Uint8Array): Uint8Array {
  const long = LONG_VRS.has(vr);
  const out = new Uint8Array((long ? 12 : 8) + value.length);
  const view = new DataView(out.buffer);
  view.setUint16(0, 0x0002, true);
  view.setUint16(2, element, true);
  out[4] = vr.charCodeAt(0);
  out[5] = vr.charCodeAt(1);
  if (long) view.setUint32(8, value.length, true);
  else view.setUint16(6, value.length, true);
  out.set(value, long ? 12 : 8);
  return out;
}

/** A UI/SH value padded to even length (UI with NUL, others with space). */
function padded(value: string, pad: number): Uint8Array {
  const bytes = ENCODER.encode(value);
  if (bytes.length % 2 === 0) return bytes;
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = pad;
  return out;
}

/** The preamble and meta information group of a file for a dataset. */
export function p10Header(meta: P10Meta): Uint8Array {
  const elements = [
    element(0x0001, "OB", new Uint8Array([0, 1])),
    element(0x0002, "UI", padded(meta.sopClassUid, 0)),
    element(0x0003, "UI", padded(meta.sopInstanceUid, 0)),
    element(0x0010, "UI", padded(meta.transferSyntax, 0)),
    element(0x0012, "UI", padded(IMPLEMENTATION_CLASS_UID, 0)),
    element(0x0013, "SH", padded(IMPLEMENTATION_VERSION, 0x20)),
  ];
  const groupLength = elements.reduce((n, e) => n + e.length, 0);
  const lengthEl = element(0x0000, "UL", new Uint8Array(4));
  new DataView(lengthEl.buffer).setUint32(8, groupLength, true);
  const out = new Uint8Array(132 + lengthEl.length + groupLength);
  out.set(ENCODER.encode("DICM"), 128);
  let at = 132;
  for (const e of [lengthEl, ...elements]) {
    out.set(e, at);
    at += e.length;
  }
  return out;
}

/** A whole P10 file: header and dataset bytes (one copy). */
export function writeP10(meta: P10Meta, dataset: Uint8Array): Uint8Array {
  const header = p10Header(meta);
  const out = new Uint8Array(header.length + dataset.length);
  out.set(header);
  out.set(dataset, header.length);
  return out;
}
