/** How the dicom_scu backend reads the DIMSE operation out of an envelope. */
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { Body, RequestEnvelope } from "../../envelope.ts";
import { resolveCall } from "./operation.ts";

function http(method: string, path: string, query = "", metadata: Record<string, string> = {}) {
  return new RequestEnvelope({
    id: "t",
    protocol: "http",
    method,
    path,
    query: new URLSearchParams(query),
    metadata,
    endpoint: "e",
  });
}

Deno.test("HTTP paths: echo, QIDO levels, retrieval by mode, metadata, STOW", async () => {
  assertEquals((await resolveCall(http("GET", "/echo"), "get")).op, "C-ECHO");
  const series = await resolveCall(http("GET", "/studies/1.2/series", "Modality=MR"), "get");
  assertEquals(series.op, "C-FIND");
  if (series.op === "C-FIND") {
    assertEquals(series.query.level, "SERIES");
    assertEquals(series.query.identifier["0020000D"].Value, ["1.2"]);
    assertEquals(series.query.identifier["00080060"].Value, ["MR"]);
  }
  const get = await resolveCall(http("GET", "/studies/1.2/series/1.2.3/instances/1.2.3.4"), "get");
  assertEquals([get.op, get.op === "C-GET" && get.level], ["C-GET", "IMAGE"]);
  const move = await resolveCall(http("GET", "/studies/1.2/metadata"), "move");
  assertEquals([move.op, move.op === "C-MOVE" && move.metadata], ["C-MOVE", true]);
  assertEquals((await resolveCall(http("POST", "/studies"), "get")).op, "C-STORE");
});

Deno.test("metadata dicom_operation and dicom_level win; DIMSE envelopes use their method", async () => {
  const env = http("POST", "/anything", "", { dicom_operation: "find", dicom_level: "PATIENT" });
  env.body = Body.fromData({ "00100020": { vr: "LO", Value: ["P1"] } }, "application/dicom+json");
  const call = await resolveCall(env, "get");
  assertEquals(call.op, "C-FIND");
  if (call.op === "C-FIND") {
    assertEquals(call.query.level, "PATIENT");
    assertEquals(call.query.identifier["00100020"].Value, ["P1"]);
  }
  const dimse = new RequestEnvelope({
    id: "d",
    protocol: "dimse",
    method: "C-ECHO",
    path: "/C-ECHO",
    endpoint: "scp",
  });
  assertEquals((await resolveCall(dimse, "get")).op, "C-ECHO");
});

Deno.test("requests that name no operation are 400", async () => {
  const err = await assertRejects(() => resolveCall(http("DELETE", "/studies/1.2"), "get"));
  assertEquals((err as { status?: number }).status, 400);
  const bad = await assertRejects(() =>
    resolveCall(http("GET", "/x", "", { dicom_operation: "C-NOPE" }), "get")
  );
  assertEquals((bad as { code?: string }).code, "invalid_dicom_request");
  const key = await assertRejects(() =>
    resolveCall(http("GET", "/studies", "NotAKeyword=1"), "get")
  );
  assertEquals((key as { status?: number }).status, 400);
});
