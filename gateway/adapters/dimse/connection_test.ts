/**
 * DimseConnection receiving C-STORE through DimseListener: a complete request reaches the handler
 * with its dataset as sent and its file spooled while it arrived; an association that breaks in
 * the middle of a dataset aborts the spool and never reaches the handler.
 */
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { p10Header, readDataset, TS, writeDataset } from "../../dicom/mod.ts";
import { ScuAssociation } from "./client.ts";
import { encodeCommand } from "./command_set.ts";
import { DimseConnection } from "./connection.ts";
import { RawDataset } from "./dataset.ts";
import type { FileSpool } from "./instance_buffer.ts";
import { type CStoreRequest, lib } from "./dcmjs_dimse.ts";
import { negotiate } from "./negotiate.ts";
import { COMMAND, LAST, pdvPdu } from "./pdata.ts";
import { DimseListener } from "./server.ts";
import { TcpSocket } from "./tcp_socket.ts";
import { waitFor } from "../../../tests/support/wait.ts";

const CT = "1.2.840.10008.5.1.4.1.1.2";
const JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70";

/** A spool that records what it was given. */
class RecordingSpool implements FileSpool {
  readonly parts: Uint8Array[] = [];
  aborted = false;
  write(bytes: Uint8Array): void {
    this.parts.push(bytes.slice());
  }
  abort(): void {
    this.aborted = true;
  }
  get bytes(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.byteLength, 0));
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }
}

/** A listener storing nothing, recording spools and requests; `recycle` lets it reuse memory. */
async function listen(recycle = false) {
  const spools: RecordingSpool[] = [];
  const stored: { request: CStoreRequest; spool?: FileSpool }[] = [];
  let closed!: () => void;
  const connectionClosed = new Promise<void>((resolve) => closed = resolve);
  const listener = await DimseListener.listen({
    hostname: "127.0.0.1",
    port: 0,
    onConnection(conn) {
      conn.handler = {
        associationRequested(association) {
          negotiate(association, { calledAet: "SCP", services: new Set(["store"]) });
          conn.sendAssociationAccept();
        },
        storeSpool() {
          const spool = new RecordingSpool();
          spools.push(spool);
          return spool;
        },
        store(request, reply, spool, recycleMemory) {
          stored.push({ request, spool });
          if (recycle) recycleMemory?.();
          const res = lib.responses.CStoreResponse.fromRequest(request);
          res.setStatus(0);
          reply(res);
        },
        closed,
      };
    },
  });
  return { listener, spools, stored, connectionClosed };
}

/** A dataset of `n` bytes in Explicit VR Little Endian: SOP class/instance, then OB data. */
function dataset(sopInstanceUid: string, n: number): Uint8Array {
  const uid = (el: number, v: string) => {
    const text = v.length % 2 ? `${v}\0` : v;
    return [8, 0, el, 0, 0x55, 0x49, text.length, 0, ...[...text].map((c) => c.charCodeAt(0))];
  };
  const head = [...uid(0x16, CT), ...uid(0x18, sopInstanceUid)];
  const body = n - head.length - 12;
  const out = new Uint8Array(n);
  out.set(head);
  out.set(
    [0xe0, 0x7f, 0x10, 0x00, 0x4f, 0x42, 0, 0, body & 255, (body >> 8) & 255, body >> 16, 0],
    head.length,
  );
  for (let i = head.length + 12; i < n; i++) out[i] = i & 255;
  return out;
}

Deno.test("a C-STORE arrives whole, its file spooled while it arrived", async () => {
  const { listener, spools, stored } = await listen();
  const assoc = await ScuAssociation.open({
    host: "127.0.0.1",
    port: listener.port,
    callingAet: "SCU",
    calledAet: "SCP",
    contexts: [{ abstractSyntax: CT, transferSyntaxes: [TS.explicitLE] }],
  });
  try {
    const bytes = dataset("1.2.3.4", 300_000);
    const request = new lib.requests.CStoreRequest(new RawDataset(bytes, TS.explicitLE));
    const res = await assoc.request(request);
    assertEquals(res.getStatus(), 0);
    assertEquals(stored.length, 1);
    const received = stored[0].request;
    assertEquals(received.getAffectedSopInstanceUid(), "1.2.3.4");
    const raw = received.getDataset() as RawDataset;
    assertEquals(raw.bytes, bytes);
    assertEquals(raw.identity().SOPClassUID, CT);
    const header = p10Header({
      transferSyntax: TS.explicitLE,
      sopClassUid: CT,
      sopInstanceUid: "1.2.3.4",
    });
    assertEquals(raw.file!.subarray(0, header.length), header);
    assert(stored[0].spool === spools[0], "the spool of the request is handed to store()");
    assertEquals(spools[0].bytes, raw.file);
    assertEquals(spools[0].aborted, false);
  } finally {
    await assoc.release();
    await listener.close();
  }
});

Deno.test("an association broken in the middle of a C-STORE dataset aborts its spool", async () => {
  const { listener, spools, stored, connectionClosed } = await listen();
  const socket = TcpSocket.connect("127.0.0.1", listener.port);
  const conn = new DimseConnection(socket);
  const association = new lib.association.Association("SCU", "SCP");
  const pc = association.addPresentationContext(CT);
  association.addTransferSyntaxToPresentationContext(pc, TS.explicitLE);
  await new Promise<void>((resolve) => {
    conn.handler = {
      connected: () => conn.sendAssociationRequest(association),
      associationAccepted: () => resolve(),
    };
  });
  const command = encodeCommand({
    AffectedSOPClassUID: CT,
    CommandField: 1,
    MessageID: 1,
    Priority: 0,
    CommandDataSetType: 0,
    AffectedSOPInstanceUID: "1.2.3.5",
  })!;
  socket.write(pdvPdu(pc, COMMAND | LAST, command));
  socket.write(pdvPdu(pc, 0, dataset("1.2.3.5", 200_000).subarray(0, 70_000)));
  // Once the listener has spooled part of the dataset, break the association.
  await waitFor(() => Promise.resolve(spools.length > 0 && spools[0].parts.length > 0), {
    timeoutMs: 10_000,
    intervalMs: 5,
    description: "part of the dataset spooled",
  });
  socket.destroy();
  await connectionClosed;
  await listener.close();
  assertEquals(spools.length, 1);
  assertEquals(spools[0].aborted, true);
  assertEquals(stored.length, 0);
});

Deno.test("a handler that recycles gets the next instance in the same memory", async () => {
  for (const recycle of [true, false]) {
    const { listener, stored } = await listen(recycle);
    const assoc = await ScuAssociation.open({
      host: "127.0.0.1",
      port: listener.port,
      callingAet: "SCU",
      calledAet: "SCP",
      contexts: [{ abstractSyntax: CT, transferSyntaxes: [TS.explicitLE] }],
    });
    try {
      const buffers: ArrayBufferLike[] = [];
      for (const [i, uid] of ["1.2.3.10", "1.2.3.9", "1.2.3.11"].entries()) {
        const bytes = dataset(uid, 200_000 + i * 100);
        await assoc.request(new lib.requests.CStoreRequest(new RawDataset(bytes, TS.explicitLE)));
        const raw = stored[i].request.getDataset() as RawDataset;
        // Checked before the next instance may overwrite it.
        assertEquals(raw.bytes, bytes);
        buffers.push(raw.bytes.buffer);
      }
      // The first instance had no expected size; the second and third share prepared memory
      // only when the handler recycled it.
      assertEquals(buffers[1] === buffers[2], recycle, `recycle ${recycle}`);
    } finally {
      await assoc.release();
      await listener.close();
    }
  }
});

Deno.test("a dataset is converted to the uncompressed syntax its context accepted, compressed never", async () => {
  const { listener, stored } = await listen();
  // The listener accepts the requestor's first syntax for storage: Implicit VR Little Endian here.
  const assoc = await ScuAssociation.open({
    host: "127.0.0.1",
    port: listener.port,
    callingAet: "SCU",
    calledAet: "SCP",
    contexts: [{ abstractSyntax: CT, transferSyntaxes: [TS.implicitLE] }],
  });
  try {
    const bytes = dataset("1.2.3.6", 10_000);
    const explicit = new lib.requests.CStoreRequest(new RawDataset(bytes, TS.explicitLE));
    assertEquals((await assoc.request(explicit)).getStatus(), 0);
    const raw = stored[0].request.getDataset() as RawDataset;
    assertEquals(raw.getTransferSyntaxUid(), TS.implicitLE);
    assertEquals(raw.bytes, writeDataset(readDataset(bytes, TS.explicitLE), TS.implicitLE));
    assertEquals(raw.identity().SOPInstanceUID, "1.2.3.6");
    // JPEG Lossless data cannot go on that context: the request ends unanswered, nothing is sent.
    const jpeg = new lib.requests.CStoreRequest(new RawDataset(bytes, JPEG_LOSSLESS));
    await assertRejects(() => assoc.request(jpeg), /could not be sent/);
    assertEquals(stored.length, 1);
  } finally {
    await assoc.release();
    await listener.close();
  }
});
