/** newRequest: requests made without dcmjs-dimse's constructor. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { lib, newRequest } from "./dcmjs_dimse.ts";

Deno.test("newRequest: a request as its constructor makes it, its own command set and listeners", () => {
  for (const Request of [lib.requests.CEchoRequest, lib.requests.CFindRequest]) {
    const made = new Request();
    const a = newRequest(Request);
    const b = newRequest(Request);
    assert(a instanceof Request);
    assertEquals(a.getCommandDataset().getElements(), made.getCommandDataset().getElements());
    assertEquals(
      a.getCommandDataset().getTransferSyntaxUid(),
      made.getCommandDataset().getTransferSyntaxUid(),
    );
    const keys = (o: object) => Reflect.ownKeys(o).map(String).sort();
    assertEquals(keys(a), keys(made));
    assert(a.getCommandDataset() !== b.getCommandDataset());
    a.setMessageId(7);
    assertEquals(b.getMessageId(), undefined);
    let heard = 0;
    a.on("done", () => heard++);
    b.raiseDoneEvent();
    assertEquals(heard, 0);
    a.raiseDoneEvent();
    assertEquals(heard, 1);
  }
  const commandSet = new lib.Dataset({ CommandField: 0x20, MessageID: 3 }, "1.2.840.10008.1.2");
  const received = newRequest(lib.requests.CFindRequest, commandSet);
  assert(received.getCommandDataset() === commandSet);
  assertEquals(received.getMessageId(), 3);
});
