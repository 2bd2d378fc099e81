/**
 * The body of a DICOM instance in an envelope: its bytes are the Part 10 file (forwarded as is,
 * `application/dicom`), its `data()` is the DICOM JSON of the header (elements before Pixel Data;
 * binary values up to 1 KiB inline), parsed only when a middleware or backend asks for it.
 */
import { Body } from "../envelope.ts";
import { readDataset, toDicomJson } from "./json.ts";
import { parseP10 } from "./p10.ts";

/** A Part 10 instance as an envelope body. */
export class DicomBody extends Body {
  #file: Uint8Array;
  #json: unknown;

  /** `header`: the header's DICOM JSON when the caller parsed it already. */
  constructor(file: Uint8Array, header?: unknown) {
    super(file, "application/dicom");
    this.#file = file;
    this.#json = header;
  }

  /** DICOM JSON of the header, unless a middleware replaced the data. */
  override async data(): Promise<unknown> {
    if (this.dataChanged) return await super.data();
    if (this.#json === undefined) {
      const p10 = parseP10(this.#file);
      this.#json = toDicomJson(readDataset(p10.dataset, p10.meta.transferSyntax, "7FE00010"), {
        inlineLimit: 1024,
      });
    }
    return this.#json;
  }
}
