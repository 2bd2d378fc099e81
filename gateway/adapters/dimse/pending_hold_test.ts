/**
 * C-FIND pending responses are held back to go out with what follows them (connection.ts): every
 * match still arrives, in order, whether the answer crosses the hold's limit or not, and nothing
 * stays held after the final response (the next request on the association is answered).
 */
import { assertEquals } from "../../../tests/assert.ts";
import { SOP, STATUS, TS } from "../../dicom/mod.ts";
import { ScuAssociation } from "./client.ts";
import { datasetJson, JsonDataset } from "./dataset.ts";
import { lib } from "./dcmjs_dimse.ts";
import { negotiate } from "./negotiate.ts";
import { DimseListener } from "./server.ts";

/** `promise`, or a failure after 5 s (a response left held would never arrive). */
async function answered<T>(promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no final response within 5 s")), 5_000);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A listener answering a C-FIND with `matches` pending responses (PatientID = their index). */
async function finder(matches: number) {
  return await DimseListener.listen({
    hostname: "127.0.0.1",
    port: 0,
    onConnection(conn) {
      conn.handler = {
        associationRequested(association) {
          negotiate(association, { calledAet: "SCP", services: new Set(["echo", "find"]) });
          conn.sendAssociationAccept();
        },
        echo(request, reply) {
          const res = lib.responses.CEchoResponse.fromRequest(request);
          res.setStatus(STATUS.success);
          reply(res);
        },
        find(request, reply) {
          const respond = (status: number, index?: number) => {
            const res = lib.responses.CFindResponse.fromRequest(request);
            res.setStatus(status);
            if (index !== undefined) {
              res.setDataset(
                new JsonDataset({ "00100020": { vr: "LO", Value: [`P${index}`] } }, TS.implicitLE),
              );
            }
            reply(res);
          };
          // As the dicom_scp endpoint does: the matches at once, the final after an await.
          for (let i = 0; i < matches; i++) respond(STATUS.pending, i);
          queueMicrotask(() => respond(STATUS.success));
        },
      };
    },
  });
}

Deno.test("held C-FIND pending responses all arrive in order, and the final releases them", async () => {
  for (const matches of [0, 1, 3, 64, 150]) {
    const listener = await finder(matches);
    const assoc = await ScuAssociation.open({
      host: "127.0.0.1",
      port: listener.port,
      callingAet: "SCU",
      calledAet: "SCP",
      contexts: [
        { abstractSyntax: SOP.studyRootFind, transferSyntaxes: [TS.implicitLE] },
        { abstractSyntax: SOP.verification, transferSyntaxes: [TS.implicitLE] },
      ],
    });
    try {
      for (let round = 0; round < 2; round++) {
        const request = new lib.requests.CFindRequest();
        request.setAffectedSopClassUid(SOP.studyRootFind);
        request.setDataset(new JsonDataset({ "00100020": { vr: "LO" } }, TS.implicitLE));
        const seen: string[] = [];
        const final = await answered(assoc.request(request, (res) => {
          seen.push(String(datasetJson(res.getDataset())["00100020"]?.Value?.[0]));
        }));
        assertEquals(final.getStatus(), STATUS.success);
        assertEquals(seen, Array.from({ length: matches }, (_, i) => `P${i}`), `${matches}`);
      }
      const echo = await answered(assoc.request(new lib.requests.CEchoRequest()));
      assertEquals(echo.getStatus(), STATUS.success);
    } finally {
      await assoc.release();
      await listener.close();
    }
  }
});
