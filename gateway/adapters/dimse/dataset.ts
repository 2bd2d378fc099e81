/**
 * Datasets handed to dcmjs-dimse without its parse/re-encode round trip: `RawDataset` sends the
 * bytes it was given (pixel data untouched), `JsonDataset` encodes DICOM JSON directly (private
 * tags kept). Both parse fully only when dcmjs-dimse must transcode to another transfer syntax.
 */
import { Buffer } from "node:buffer";
import {
  type DcmjsDict,
  type DicomJson,
  fromDicomJson,
  readDataset,
  toDicomJson,
  writeDataset,
} from "../../dicom/mod.ts";
import { lib, type LibDataset, META } from "./lib.ts";

/** Naturalized elements (dcmjs-dimse's working form) of a dcmjs dictionary. */
function naturalize(dict: DcmjsDict): Record<string, unknown> {
  return META.naturalizeDataset(dict) as Record<string, unknown>;
}

/**
 * Encoded dataset bytes in a transfer syntax. The header (elements before Pixel Data) is parsed
 * on first use; when received over the network, `file` is the Part 10 file around the bytes.
 */
export class RawDataset extends lib.Dataset {
  /** The dataset bytes as received or read from a file. */
  readonly bytes: Uint8Array;
  /** The Part 10 file holding `bytes`, when one was assembled on receipt. */
  readonly file?: Uint8Array;
  #header: DcmjsDict | undefined;
  #natural: Record<string, unknown> | undefined;
  #full: Record<string, unknown> | undefined;

  constructor(bytes: Uint8Array, transferSyntax: string, file?: Uint8Array) {
    super({}, transferSyntax);
    this.bytes = bytes;
    this.file = file;
  }

  /** The elements before Pixel Data (dcmjs dictionary), parsed once. */
  get header(): DcmjsDict {
    this.#header ??= readDataset(this.bytes, this.getTransferSyntaxUid(), "7FE00010");
    return this.#header;
  }

  /** An element of the header by keyword (dcmjs-dimse reads SOP class and instance UIDs). */
  override getElement(tag: string): string | undefined {
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

/** A dataset built from DICOM JSON (identifiers, C-FIND matches). */
export class JsonDataset extends lib.Dataset {
  /** The DICOM JSON this dataset encodes. */
  readonly json: DicomJson;

  constructor(json: DicomJson, transferSyntax: string) {
    super(naturalize(fromDicomJson(json)), transferSyntax);
    this.json = json;
  }

  /** Encode the DICOM JSON in the dataset's transfer syntax. */
  override getDenaturalizedDataset(): Buffer {
    const bytes = writeDataset(fromDicomJson(this.json), this.getTransferSyntaxUid());
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}

/** DICOM JSON of any dataset dcmjs-dimse produced. */
export function datasetJson(dataset: LibDataset | undefined): DicomJson {
  if (!dataset) return {};
  if (dataset instanceof JsonDataset) return dataset.json;
  if (dataset instanceof RawDataset) {
    return toDicomJson(readDataset(dataset.bytes, dataset.getTransferSyntaxUid()));
  }
  const dict = META.denaturalizeDataset(dataset.getElements()) as DcmjsDict;
  return toDicomJson(dict);
}
