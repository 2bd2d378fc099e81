/** How the dicom_scu backend reads the DIMSE operation out of an envelope. */
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
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
  assertEquals([move.op, move.op === "C-MOVE" && move.output], ["C-MOVE", { kind: "metadata" }]);
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

Deno.test("frames and bulk data paths retrieve the one instance", async () => {
  const frames = await resolveCall(
    http("GET", "/studies/1.2/series/1.2.3/instances/1.2.3.4/frames/3,1%2C2"),
    "get",
  );
  assert(frames.op === "C-GET");
  assertEquals(frames.level, "IMAGE");
  assertEquals(frames.output, { kind: "frames", frames: [3, 1, 2] });
  assertEquals(frames.identifier["00080018"].Value, ["1.2.3.4"]);
  const bulk = await resolveCall(
    http("GET", "/bulkdata/1.2/1.2.3/1.2.3.4/00480105/0/00282000"),
    "move",
  );
  assert(bulk.op === "C-MOVE");
  assertEquals(bulk.output, { kind: "bulkdata", tagPath: "00480105/0/00282000" });
  assertEquals(
    ["0020000D", "0020000E", "00080018"].map((t) => bulk.identifier[t].Value?.[0]),
    ["1.2", "1.2.3", "1.2.3.4"],
  );
});

Deno.test("a malformed frame list is 400, an unknown bulk data path 404", async () => {
  for (const list of ["0", "1,,2", "a", "1,1", "2-3", ""]) {
    const path = `/studies/1.2/series/1.2.3/instances/1.2.3.4/frames/${list}`;
    const err = await assertRejects(() => resolveCall(http("GET", path), "get"));
    const status = (err as { status?: number }).status;
    // An empty list is no frames route at all: no operation for that path (400 as well).
    assertEquals([list, status], [list, 400]);
  }
  const err = await assertRejects(() => resolveCall(http("GET", "/bulkdata/whatever"), "get"));
  assertEquals((err as { status?: number }).status, 404);
});
