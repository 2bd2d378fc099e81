/**
 * The body of a received C-STORE instance: the Part 10 file, forwarded as it is
 * (`application/dicom`); its `data()` (the header as DICOM JSON) is parsed from the header bytes
 * only when a middleware or backend first asks for it.
 */
import type { RawDataset } from "../../adapters/dimse/mod.ts";
import { DicomBody } from "../../dicom/mod.ts";

/** A received instance as an envelope body. */
export class ReceivedInstanceBody extends DicomBody {
  readonly #dataset: RawDataset;
  #json: unknown;

  constructor(file: Uint8Array, dataset: RawDataset) {
    super(file);
    this.#dataset = dataset;
  }

  /** DICOM JSON of the header, unless a middleware replaced the data. */
  override async data(): Promise<unknown> {
    if (this.dataChanged) return await super.data();
    this.#json ??= this.#dataset.headerJson();
    return this.#json;
  }
}
