/**
 * DICOM JSON (PS3.18 Annex F) <-> the tag-keyed element dictionaries of dcmjs (`{ "00100010":
 * { vr, Value } }`), and both <-> encoded dataset bytes.
 *
 * Conversions follow Annex F: tags are 8 uppercase hex digits; an empty element has no `Value`;
 * IS/DS/US/SS/UL/SL/FL/FD values are JSON numbers; PN values are `{ Alphabetic, Ideographic,
 * Phonetic }`; sequences hold item objects; binary values (OB, OW, OF, OD, OL, OV, UN) become
 * `InlineBinary` (base64) up to `inlineLimit` bytes, else the element keeps only its `vr` (or gets a
 * `BulkDataURI` when a `bulkDataUri` callback is given).
 */
import dcmjs from "dcmjs";
import { decodeDataset, type DecodeOptions } from "./dcmjs_read.ts";
import { MAX_SEQUENCE_DEPTH, sequenceDepth } from "./nesting.ts";
import { GatewayError } from "../errors.ts";
import { vrOf } from "./dictionary.ts";

/** One element of a DICOM JSON dataset. */
export interface DicomJsonElement {
  vr: string;
  Value?: unknown[];
  InlineBinary?: string;
  BulkDataURI?: string;
}

/** A DICOM JSON dataset (PS3.18 F.2). */
export type DicomJson = Record<string, DicomJsonElement>;

/** A dcmjs element dictionary (tag -> { vr, Value }). */
export type DcmjsDict = Record<string, { vr: string; Value?: unknown[]; _rawValue?: unknown }>;

/** Options of {@link toDicomJson}. */
export interface ToJsonOptions {
  /** Largest binary value written inline (bytes); default 64 KiB. */
  inlineLimit?: number;
  /** Builds a BulkDataURI for a binary element over the limit (tag path like `7FE00010`). */
  bulkDataUri?: (tagPath: string) => string | undefined;
}

const BINARY_VRS = new Set(["OB", "OW", "OF", "OD", "OL", "OV", "UN"]);
const NUMBER_VRS = new Set(["IS", "DS", "US", "SS", "UL", "SL", "FL", "FD", "UV", "SV"]);
const { DicomMessage, WriteBufferStream } = dcmjs.data;
// dcmjs warns on every element it has to guess a VR for; errors are enough.
dcmjs.log?.setLevel?.("error");

/** Base64 of bytes. */
export function toBase64(bytes: Uint8Array): string {
  let out = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) {
    out += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(out);
}

/** Bytes of base64 text. */
export function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The bytes of a binary element's values (ArrayBuffers or views), joined. */
export function binaryBytes(values: unknown[]): Uint8Array {
  const parts = values.map((v) =>
    v instanceof ArrayBuffer
      ? new Uint8Array(v)
      : ArrayBuffer.isView(v)
      ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
      : new Uint8Array(0)
  );
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function jsonValue(vr: string, v: unknown): unknown {
  if (v === "" || v === undefined) return null;
  if (NUMBER_VRS.has(vr) && typeof v === "string") {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : v;
  }
  if (typeof v === "bigint") return Number(v);
  return v;
}

/** dcmjs element dictionary -> DICOM JSON. */
export function toDicomJson(dict: DcmjsDict, opts: ToJsonOptions = {}, path = ""): DicomJson {
  const limit = opts.inlineLimit ?? 65536;
  const out: DicomJson = {};
  for (const key of Object.keys(dict).sort()) {
    const tag = key.toUpperCase();
    const el = dict[key];
    const vr = el.vr && el.vr.length === 2 && el.vr === el.vr.toUpperCase() ? el.vr : vrOf(tag);
    const values = Array.isArray(el.Value) ? el.Value : el.Value === undefined ? [] : [el.Value];
    const item: DicomJsonElement = { vr };
    if (vr === "SQ") {
      if (values.length) {
        item.Value = values.map((v, i) =>
          toDicomJson((v ?? {}) as DcmjsDict, opts, `${path}${tag}/${i}/`)
        );
      }
    } else if (BINARY_VRS.has(vr)) {
      const bytes = binaryBytes(values);
      if (bytes.byteLength > 0 && bytes.byteLength <= limit) item.InlineBinary = toBase64(bytes);
      else if (bytes.byteLength > 0) {
        const uri = opts.bulkDataUri?.(`${path}${tag}`);
        if (uri) item.BulkDataURI = uri;
      }
    } else if (vr === "PN") {
      const names = values.map((v) =>
        typeof v === "string" ? (v === "" ? null : { Alphabetic: v }) : v ?? null
      );
      if (names.some((n) => n !== null)) item.Value = names;
    } else {
      const mapped = values.map((v) => jsonValue(vr, v));
      if (mapped.some((v) => v !== null)) item.Value = mapped;
    }
    out[tag] = item;
  }
  return out;
}

/** DICOM JSON -> dcmjs element dictionary (for encoding). */
export function fromDicomJson(json: DicomJson): DcmjsDict {
  const out: DcmjsDict = {};
  for (const [key, el] of Object.entries(json)) {
    if (!/^[0-9A-Fa-f]{8}$/.test(key) || typeof el !== "object" || el === null) continue;
    const tag = key.toUpperCase();
    const vr = typeof el.vr === "string" ? el.vr : vrOf(tag);
    if (vr === "SQ") {
      out[tag] = {
        vr,
        Value: (el.Value ?? []).map((item) => fromDicomJson((item ?? {}) as DicomJson)),
      };
    } else if (el.InlineBinary !== undefined) {
      const bytes = fromBase64(el.InlineBinary);
      out[tag] = {
        vr,
        Value: [bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)],
      };
    } else if (BINARY_VRS.has(vr)) {
      out[tag] = { vr, Value: [] };
    } else {
      out[tag] = { vr, Value: (el.Value ?? []).map((v) => (v === null ? "" : v)) };
    }
  }
  return out;
}

/**
 * Decode dataset bytes (no preamble or meta group) in a transfer syntax to a dcmjs dictionary.
 * With `untilTag` reading stops at that element (its value left out), or, with `stopAfter`, after
 * it (its value read) or at the first element past it when the dataset lacks it.
 */
export function readDataset(
  bytes: Uint8Array,
  transferSyntax: string,
  untilTag?: string,
  stopAfter = false,
): DcmjsDict {
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  // dcmjs picks the encoding from the syntax but knows only the three uncompressed ones.
  const syntax = transferSyntax === "1.2.840.10008.1.2" || transferSyntax === "1.2.840.10008.1.2.2"
    ? transferSyntax
    : "1.2.840.10008.1.2.1";
  // dcmjs recurses into nested sequences: a deep dataset would hold the loop, then overflow.
  const depth = sequenceDepth(bytes, syntax);
  if (depth > MAX_SEQUENCE_DEPTH) {
    throw new GatewayError(
      422,
      "dicom_too_deep",
      `the DICOM dataset nests sequences deeper than ${MAX_SEQUENCE_DEPTH} levels`,
      { max_sequence_depth: MAX_SEQUENCE_DEPTH },
    );
  }
  const options: DecodeOptions = { ignoreErrors: true };
  if (untilTag) options.untilTag = untilTag;
  if (stopAfter) Object.assign(options, { stopOnGreaterTag: true, includeUntilTagValue: true });
  return decodeDataset(ab as ArrayBuffer, syntax, options);
}

/** Encode a dcmjs dictionary as dataset bytes in a transfer syntax. */
export function writeDataset(dict: DcmjsDict, transferSyntax: string): Uint8Array {
  const stream = new WriteBufferStream();
  DicomMessage.write(dict, stream, transferSyntax, {});
  return new Uint8Array(stream.getBuffer());
}

/** The first value of an element of a DICOM JSON dataset, as a string (PN: Alphabetic). */
export function jsonString(json: DicomJson, tag: string): string | undefined {
  const v = json[tag]?.Value?.[0];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "object") return (v as { Alphabetic?: string }).Alphabetic;
  return String(v);
}
