/**
 * ReceivedInstanceBody: `info(true)` reports the size and SHA-256 of the received file, computed
 * on demand, and the replaced data's when a middleware replaced it.
 */
import { assertEquals } from "../../../tests/assert.ts";
import { RawDataset } from "../../adapters/dimse/mod.ts";
import { fromDicomJson, TS, writeDataset, writeP10 } from "../../dicom/mod.ts";
import { sha256Hex } from "../../envelope.ts";
import { ReceivedInstanceBody } from "./instance_body.ts";

function instance(): { file: Uint8Array; dataset: RawDataset } {
  const bytes = writeDataset(
    fromDicomJson({
      "00080016": { vr: "UI", Value: ["1.2.840.10008.5.1.4.1.1.2"] },
      "00080018": { vr: "UI", Value: ["1.2.3.4"] },
      "00100020": { vr: "LO", Value: ["PID-1"] },
    }),
    TS.explicitLE,
  );
  const meta = {
    transferSyntax: TS.explicitLE,
    sopClassUid: "1.2.840.10008.5.1.4.1.1.2",
    sopInstanceUid: "1.2.3.4",
  };
  const file = writeP10(meta, bytes);
  return {
    file,
    dataset: new RawDataset(file.subarray(file.length - bytes.length), TS.explicitLE, file),
  };
}

Deno.test("ReceivedInstanceBody: info(true) is the received file's size and SHA-256", async () => {
  const { file, dataset } = instance();
  const expected = await sha256Hex(file);
  const lazy = await new ReceivedInstanceBody(file, dataset).info(true);
  assertEquals([lazy.size, lazy.sha256, lazy.media_type], [
    file.length,
    expected,
    "application/dicom",
  ]);
  const plain = await new ReceivedInstanceBody(file, dataset).info();
  assertEquals(plain.sha256, undefined);
  // Replaced data is hashed as what it now is.
  const changed = new ReceivedInstanceBody(file, dataset);
  changed.setData({ replaced: true }, "application/json");
  const info = await changed.info(true);
  assertEquals(info.sha256, await sha256Hex(new TextEncoder().encode('{"replaced":true}')));
});
