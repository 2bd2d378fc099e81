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

/** Encoded dataset bytes in a transfer syntax; the header is parsed up to the pixel data. */
export class RawDataset extends lib.Dataset {
  /** The dataset bytes as received or read from a file. */
  readonly bytes: Uint8Array;
  /** The elements before Pixel Data (dcmjs dictionary). */
  readonly header: DcmjsDict;
  #full: Record<string, unknown> | undefined;

  constructor(bytes: Uint8Array, transferSyntax: string) {
    const header = readDataset(bytes, transferSyntax, "7FE00010");
    super(naturalize(header), transferSyntax);
    this.bytes = bytes;
    this.header = header;
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
    return toDicomJson(this.header);
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
