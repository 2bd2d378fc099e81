/**
 * The body of a received C-STORE instance: the Part 10 file, forwarded as it is
 * (`application/dicom`); its `data()` (the header as DICOM JSON) is parsed from the header bytes
 * only when a middleware or backend first asks for it, and its checksum (`info(true)`, what the
 * `echo` backend reports when its answer is read) is computed then, once, with node:crypto (about
 * twice as fast as WebCrypto's digest, which copies the bytes first).
 */
import { createHash } from "node:crypto";
import type { RawDataset } from "../../adapters/dimse/mod.ts";
import { DicomBody } from "../../dicom/mod.ts";
import type { ContentInfo } from "../../envelope.ts";

/** A received instance as an envelope body. */
export class ReceivedInstanceBody extends DicomBody {
  readonly #file: Uint8Array;
  readonly #dataset: RawDataset;
  #json: unknown;
  #sha256: string | undefined;

  constructor(file: Uint8Array, dataset: RawDataset) {
    super(file);
    this.#file = file;
    this.#dataset = dataset;
  }

  /** DICOM JSON of the header, unless a middleware replaced the data. */
  override async data(): Promise<unknown> {
    if (this.dataChanged) return await super.data();
    this.#json ??= this.#dataset.headerJson();
    return this.#json;
  }

  /** Content information; the checksum is the received file's unless the data was replaced. */
  override async info(withChecksum = false): Promise<ContentInfo> {
    if (!withChecksum || this.dataChanged) return await super.info(withChecksum);
    const info = await super.info(false);
    info.size = this.#file.byteLength;
    info.sha256 = this.#sha256 ??= createHash("sha256").update(this.#file).digest("hex");
    return info;
  }
}
