/** Command sets encoded and decoded without dcmjs give exactly what dcmjs gives. */
import { Buffer } from "node:buffer";
import { assertEquals } from "../../../tests/assert.ts";
import { decodeCommand, encodeCommand } from "./command_set.ts";
import { lib } from "./dcmjs_dimse.ts";

/** Commands of every shape the gateway sends or receives. */
function commands() {
  const store = new lib.requests.CStoreRequest(new lib.Dataset({}, "1.2.840.10008.1.2.1"));
  store.setAffectedSopClassUid("1.2.840.10008.5.1.4.1.1.2");
  store.setAffectedSopInstanceUid("1.2.826.0.1.3680043.2.1125.1.123456789");
  store.setMessageId(7);
  const moveStore = new lib.requests.CStoreRequest(new lib.Dataset({}, "1.2.840.10008.1.2"));
  moveStore.setAffectedSopClassUid("1.2.840.10008.5.1.4.1.1.4");
  moveStore.setAffectedSopInstanceUid("1.2.3");
  moveStore.setMessageId(65535);
  moveStore.getCommandDataset().setElement("MoveOriginatorApplicationEntityTitle", "MOVESCU");
  moveStore.getCommandDataset().setElement("MoveOriginatorMessageID", 3 as unknown as string);
  const ok = lib.responses.CStoreResponse.fromRequest(store);
  ok.setStatus(0);
  const failed = lib.responses.CStoreResponse.fromRequest(store);
  failed.setStatus(0xa700);
  failed.setErrorComment("cannot write to storage_dir: disk full");
  const pending = new lib.responses.CGetResponse(0xff00, "");
  pending.setRemaining(3);
  pending.setCompleted(1);
  pending.setFailures(0);
  pending.setWarnings(2);
  const echo = lib.responses.CEchoResponse.fromRequest(new lib.requests.CEchoRequest());
  return { store, moveStore, ok, failed, pending, echo };
}

Deno.test("encodeCommand writes the bytes dcmjs writes", () => {
  for (const [name, c] of Object.entries(commands())) {
    const dataset = c.getCommandDataset();
    const expected = new Uint8Array(dataset.getDenaturalizedCommandDataset());
    assertEquals(encodeCommand(dataset.getElements()), expected, name);
  }
});

Deno.test("decodeCommand reads what dcmjs reads", () => {
  for (const [name, c] of Object.entries(commands())) {
    const bytes = new Uint8Array(c.getCommandDataset().getDenaturalizedCommandDataset());
    const { _vrMap: _, CommandGroupLength: __, ...expected } = new lib.Dataset(
      Buffer.from(bytes),
      "1.2.840.10008.1.2",
    ).getElements() as Record<string, unknown>;
    assertEquals(decodeCommand(bytes), expected, name);
  }
});

Deno.test("elements outside the command group are left to dcmjs", () => {
  assertEquals(encodeCommand({ CommandField: 1, PatientID: "X" }), undefined);
  assertEquals(encodeCommand({ CommandField: 1, ErrorComment: "Müller" }), undefined);
  assertEquals(encodeCommand({ CommandField: 0x10000 }), undefined);
  // (0008,0016) in a command set, then a truncated element.
  const foreign = new Uint8Array([0x08, 0, 0x16, 0, 2, 0, 0, 0, 0x31, 0]);
  assertEquals(decodeCommand(foreign), undefined);
  const truncated = new Uint8Array([0, 0, 0x00, 0x01, 2, 0, 0, 0, 1]);
  assertEquals(decodeCommand(truncated), undefined);
});

Deno.test("padding is removed from received text values", () => {
  // AffectedSOPInstanceUID "1.2.3" + NUL, MoveOriginatorApplicationEntityTitle " CT1  ".
  const bytes = new Uint8Array([
    ...[0, 0, 0x00, 0x10, 6, 0, 0, 0],
    ..."1.2.3\0".split("").map((c) => c.charCodeAt(0)),
    ...[0, 0, 0x30, 0x10, 6, 0, 0, 0],
    ..." CT1  ".split("").map((c) => c.charCodeAt(0)),
  ]);
  assertEquals(decodeCommand(bytes), {
    AffectedSOPInstanceUID: "1.2.3",
    MoveOriginatorApplicationEntityTitle: "CT1",
  });
});
