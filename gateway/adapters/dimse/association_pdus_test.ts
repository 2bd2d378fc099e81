/**
 * Association PDUs: what we write reads back the same (AE titles, contexts, syntaxes, roles,
 * limits); A-ASSOCIATE-AC results land on the proposed contexts; malformed or truncated PDUs are
 * errors naming the problem, whatever the bytes. The wire format itself is checked against DCMTK
 * by the tests in tests/dicom_*_test.ts (storescu, findscu, movescu, getscu, dcmqrscp).
 */
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { TS } from "../../dicom/mod.ts";
import {
  decodeAbort,
  decodeAssociateAccept,
  decodeAssociateReject,
  decodeAssociateRequest,
  encodeAbort,
  encodeAssociateAccept,
  encodeAssociateReject,
  encodeAssociateRequest,
  encodeRelease,
  PDU,
} from "./association_pdus.ts";
import { lib, type LibAssociation } from "./dcmjs_dimse.ts";

const CT = "1.2.840.10008.5.1.4.1.1.2";
const GET = "1.2.840.10008.5.1.4.1.2.2.3";
const ACCEPT = 0;

function proposal(): LibAssociation {
  const a = new lib.association.Association("GATEWAY", "PACS-1");
  const get = a.addPresentationContext(GET);
  a.addTransferSyntaxToPresentationContext(get, TS.explicitLE);
  const ct = a.addPresentationContext(CT);
  a.addTransferSyntaxToPresentationContext(ct, TS.explicitLE);
  a.addTransferSyntaxToPresentationContext(ct, TS.implicitLE);
  a.getPresentationContext(ct).setUserRole(false);
  a.getPresentationContext(ct).setProviderRole(true);
  return a;
}

function contexts(a: LibAssociation) {
  return a.getPresentationContexts().map(({ id, context }) => ({
    id,
    abstract: context.getAbstractSyntaxUid(),
    syntaxes: context.getTransferSyntaxUids(),
    scp: context.getProviderRole() ?? false,
  }));
}

Deno.test("A-ASSOCIATE-RQ: AE titles, contexts, syntaxes, roles and limit read back", () => {
  const sent = proposal();
  const pdu = encodeAssociateRequest(sent, 65536);
  assertEquals(pdu[0], PDU.associateRq);
  const got = decodeAssociateRequest(pdu);
  assertEquals(got.getCallingAeTitle(), "GATEWAY");
  assertEquals(got.getCalledAeTitle(), "PACS-1");
  assertEquals(got.getMaxPduLength(), 65536);
  assertEquals(contexts(got), [
    { id: 1, abstract: GET, syntaxes: [TS.explicitLE], scp: false },
    { id: 3, abstract: CT, syntaxes: [TS.explicitLE, TS.implicitLE], scp: true },
  ]);
});

Deno.test("A-ASSOCIATE-AC: results and syntaxes land on the proposed contexts; roles only if confirmed", () => {
  const requested = decodeAssociateRequest(encodeAssociateRequest(proposal(), 65536));
  requested.getPresentationContext(1).setResult(ACCEPT, TS.explicitLE);
  requested.getPresentationContext(3).setResult(3); // abstract syntax not supported
  const ours = proposal();
  decodeAssociateAccept(encodeAssociateAccept(requested, 32768), ours);
  assertEquals(ours.getMaxPduLength(), 32768);
  assertEquals(ours.getPresentationContext(1).getResult(), ACCEPT);
  assertEquals(ours.getPresentationContext(1).getAcceptedTransferSyntaxUid(), TS.explicitLE);
  assertEquals(ours.getPresentationContext(3).getResult(), 3);
  // The SCP role was proposed on a context the acceptor rejected: it is not granted.
  assertEquals(ours.getPresentationContext(3).getProviderRole(), false);

  requested.getPresentationContext(3).setResult(ACCEPT, TS.implicitLE);
  const again = proposal();
  decodeAssociateAccept(encodeAssociateAccept(requested, 32768), again);
  assertEquals(again.getPresentationContext(3).getAcceptedTransferSyntaxUid(), TS.implicitLE);
  assertEquals(again.getPresentationContext(3).getProviderRole(), true);
});

Deno.test("A-ASSOCIATE-RJ, A-RELEASE and A-ABORT", () => {
  assertEquals(decodeAssociateReject(encodeAssociateReject(1, 1, 7)), {
    result: 1,
    source: 1,
    reason: 7,
  });
  assertEquals([...encodeRelease(PDU.releaseRq)], [5, 0, 0, 0, 0, 4, 0, 0, 0, 0]);
  assertEquals([...encodeRelease(PDU.releaseRp)], [6, 0, 0, 0, 0, 4, 0, 0, 0, 0]);
  assertEquals(decodeAbort(encodeAbort(2, 6)), { source: 2, reason: 6 });
});

Deno.test("an A-ASSOCIATE-AC naming a context never proposed is refused", async () => {
  const requested = decodeAssociateRequest(encodeAssociateRequest(proposal(), 65536));
  requested.addPresentationContext(CT, 99);
  requested.getPresentationContext(99).setResult(ACCEPT, TS.explicitLE);
  await assertRejects(
    () => decodeAssociateAccept(encodeAssociateAccept(requested, 65536), proposal()),
    /presentation context 99, never proposed/,
  );
});

Deno.test("truncated and corrupted association PDUs are errors, never a read past the end", () => {
  const rq = encodeAssociateRequest(proposal(), 65536);
  const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
  let errors = 0;
  // Every truncation, with the PDU length fixed up so the item lengths are what is wrong.
  for (let n = 6; n < rq.length; n++) {
    const cut = rq.slice(0, n);
    view(cut).setUint32(2, n - 6);
    try {
      decodeAssociateRequest(cut);
    } catch (err) {
      assert(err instanceof Error && err.message.length > 0);
      errors++;
    }
  }
  assert(errors > rq.length / 2, `${errors} truncations refused`);
  // Random corruptions: an Error or an association, nothing else, and quickly.
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  for (let i = 0; i < 2000; i++) {
    const bad = rq.slice();
    for (let k = 0; k < 3; k++) bad[6 + Math.floor(next() * (bad.length - 6))] = next() * 256;
    try {
      decodeAssociateRequest(bad);
    } catch (err) {
      assert(err instanceof Error, String(err));
    }
  }
  let refused = "";
  try {
    decodeAssociateRequest(rq.slice(0, rq.length - 1));
  } catch (err) {
    refused = (err as Error).message;
  }
  assertEquals(refused, "association PDU length does not match its bytes");
});
