/**
 * Datasets handed to dcmjs-dimse without its parse/re-encode round trip: `RawDataset` sends the
 * bytes it was given (pixel data untouched), `JsonDataset` encodes DICOM JSON directly (private
 * tags kept). Both parse fully only when dcmjs-dimse must transcode to another transfer syntax.
 * A RawDataset's identity (SOP class and instance, study, series, patient, modality) is read by a
 * header walk (header_scan.ts); its header is parsed by dcmjs only when asked for (DICOM JSON).
 */
import { Buffer } from "node:buffer";
import {
  type DcmjsDict,
  type DicomJson,
  fromDicomJson,
  readDataset,
  toDicomJson,
  TS,
  writeDataset,
} from "../../dicom/mod.ts";
import { scanHeader } from "./header_scan.ts";
import { decodeIdentifier, encodeIdentifier } from "./identifier_codec.ts";
import { lazyDicomJson, untouched } from "./lazy_json.ts";
import { lib, type LibDataset, META } from "./dcmjs_dimse.ts";

/** Naturalized elements (dcmjs-dimse's working form) of a dcmjs dictionary. */
function naturalize(dict: DcmjsDict): Record<string, unknown> {
  return META.naturalizeDataset(dict) as Record<string, unknown>;
}

/** Identity elements of an instance, by keyword, with their tags. */
export const IDENTITY = {
  SOPClassUID: 0x00080016,
  SOPInstanceUID: 0x00080018,
  Modality: 0x00080060,
  PatientID: 0x00100020,
  StudyInstanceUID: 0x0020000d,
  SeriesInstanceUID: 0x0020000e,
} as const;

/** An identity keyword. */
export type IdentityKeyword = keyof typeof IDENTITY;

const IDENTITY_TAGS = Object.values(IDENTITY);

/**
 * Encoded dataset bytes in a transfer syntax. The identity elements are read by a header walk, the
 * header (elements before Pixel Data) is parsed on first use; when received over the network,
 * `file` is the Part 10 file around the bytes.
 */
export class RawDataset extends lib.Dataset {
  /** The dataset bytes as received or read from a file. */
  readonly bytes: Uint8Array;
  /** The Part 10 file holding `bytes`, when one was assembled on receipt. */
  readonly file?: Uint8Array;
  #identity: Partial<Record<IdentityKeyword, string>> | undefined;
  #header: DcmjsDict | undefined;
  #natural: Record<string, unknown> | undefined;
  #full: Record<string, unknown> | undefined;

  constructor(bytes: Uint8Array, transferSyntax: string, file?: Uint8Array) {
    super({}, transferSyntax);
    this.bytes = bytes;
    this.file = file;
  }

  /**
   * The identity elements present (first value, padding removed), read once by a header walk; the
   * parsed header when the walk cannot read them (deflated, another character set).
   */
  identity(): Partial<Record<IdentityKeyword, string>> {
    if (this.#identity) return this.#identity;
    const scan = scanHeader(this.bytes, this.getTransferSyntaxUid(), IDENTITY_TAGS, false);
    const out: Partial<Record<IdentityKeyword, string>> = {};
    for (const [keyword, tag] of Object.entries(IDENTITY) as [IdentityKeyword, number][]) {
      const value = scan ? scan.values.get(tag) : this.#headerText(keyword);
      if (value) out[keyword] = value;
    }
    return (this.#identity = out);
  }

  #headerText(keyword: string): string | undefined {
    this.#natural ??= naturalize(this.header);
    const v = this.#natural[keyword];
    const first = Array.isArray(v) ? v[0] : v;
    if (first === undefined || first === null || first === "") return undefined;
    return typeof first === "object"
      ? (first as { Alphabetic?: string }).Alphabetic
      : String(first);
  }

  /** The elements before Pixel Data (dcmjs dictionary), parsed once from the header bytes only. */
  get header(): DcmjsDict {
    if (!this.#header) {
      const ts = this.getTransferSyntaxUid();
      const end = scanHeader(this.bytes, ts, [])?.headerEnd ?? this.bytes.byteLength;
      this.#header = readDataset(this.bytes.subarray(0, end), ts, "7FE00010");
    }
    return this.#header;
  }

  /** An element of the header by keyword (dcmjs-dimse reads SOP class and instance UIDs). */
  override getElement(tag: string): string | undefined {
    if (tag in IDENTITY) return this.identity()[tag as IdentityKeyword];
    this.#natural ??= naturalize(this.header);
    return this.#natural[tag] as string | undefined;
  }

  /** All elements, parsed on demand (dcmjs-dimse reads them only to transcode). */
  override getElements(): Record<string, unknown> {
    this.#full ??= naturalize(readDataset(this.bytes, this.getTransferSyntaxUid()));
    return this.#full;
  }

  /** The bytes as given, when the transfer syntax is unchanged. */
  override getDenaturalizedDataset(): Buffer {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  /** The header as DICOM JSON (pixel data left out). */
  headerJson(): DicomJson {
    return toDicomJson(this.header, { inlineLimit: 1024 });
  }
}

/**
 * A dataset built from DICOM JSON (identifiers, C-FIND matches): encoded directly
 * (identifier_codec.ts) when it can be, by dcmjs otherwise; naturalized only when asked for.
 */
export class JsonDataset extends lib.Dataset {
  /** The DICOM JSON this dataset encodes. */
  readonly json: DicomJson;
  #natural: Record<string, unknown> | undefined;

  constructor(json: DicomJson, transferSyntax: string) {
    super({}, transferSyntax);
    this.json = json;
  }

  override getElements(): Record<string, unknown> {
    return this.#natural ??= naturalize(fromDicomJson(this.json));
  }

  override getElement(tag: string): string | undefined {
    return this.getElements()[tag] as string | undefined;
  }

  /**
   * Encode the DICOM JSON in the dataset's transfer syntax; JSON of received bytes that nothing
   * has looked at (lazy_json.ts) is those bytes, when they are in that syntax.
   */
  override getDenaturalizedDataset(): Buffer {
    const ts = this.getTransferSyntaxUid();
    const raw = untouched(this.json);
    if (raw !== undefined && raw.ts === ts) {
      return Buffer.from(raw.bytes.buffer, raw.bytes.byteOffset, raw.bytes.byteLength);
    }
    const bytes = encodeIdentifier(this.json, ts) ?? writeDataset(fromDicomJson(this.json), ts);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}

/**
 * DICOM JSON of a received dataset, decoded when first looked at (lazy_json.ts): passed on
 * untouched, it is sent again as the bytes it came in. Other datasets as datasetJson.
 */
export function lazyDatasetJson(dataset: LibDataset | undefined): DicomJson {
  if (dataset instanceof RawDataset && CONVERTIBLE.includes(dataset.getTransferSyntaxUid())) {
    return lazyDicomJson(dataset.bytes, dataset.getTransferSyntaxUid());
  }
  return datasetJson(dataset);
}

/** The syntaxes lazy_json.ts and the identifier codec read. */
const CONVERTIBLE: readonly string[] = [TS.implicitLE, TS.explicitLE];

/** DICOM JSON of any dataset dcmjs-dimse produced. */
export function datasetJson(dataset: LibDataset | undefined): DicomJson {
  if (!dataset) return {};
  if (dataset instanceof JsonDataset) return dataset.json;
  if (dataset instanceof RawDataset) {
    const ts = dataset.getTransferSyntaxUid();
    return decodeIdentifier(dataset.bytes, ts) ?? toDicomJson(readDataset(dataset.bytes, ts));
  }
  const dict = META.denaturalizeDataset(dataset.getElements()) as DcmjsDict;
  return toDicomJson(dict);
}
