import { deepEqual, equal } from "node:assert/strict";
import { decodeBody, encodeData, formatOf, hl7HeaderOfBody, hl7Metadata } from "./mod.ts";
import { expectError, limits, utf8 } from "../../tests/support/codecs.ts";

const ER7 = "MSH|^~\\&|LAB|NORTH|EHR|SOUTH|20240102||ORU^R01^ORU_R01|9|P|2.5\rPID|1||7^^^N^MR\r";
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

Deno.test("hl7 bodies: the two HL7 media types and text/plain starting with MSH are the codec's JSON", async () => {
  equal(formatOf("x-application/hl7-v2+er7"), "hl7");
  equal(formatOf("application/hl7-v2; charset=utf-8"), "hl7");
  equal(formatOf("text/plain"), "text");
  for (
    const ct of [
      "x-application/hl7-v2+er7",
      "application/hl7-v2",
      "text/plain",
      "text/plain; charset=utf-8",
    ]
  ) {
    const data = await decodeBody(utf8(ER7), ct, limits()) as { order: string[] };
    deepEqual(data.order, ["MSH", "PID"], ct);
    const back = encodeData(data, ct);
    equal(back.contentType, ct);
    equal(text(back.bytes), ER7, ct);
  }
  // Other text stays a string, also one that starts with "MSH" and a letter.
  equal(await decodeBody(utf8("MSHELL"), "text/plain", limits()), "MSHELL");
  // A batch in text/plain, and an ISO 8859-1 body decoded by its charset.
  const batch = await decodeBody(utf8("FHS|^~\\&\rMSH|^~\\&|A\rFTS|1\r"), "text/plain", limits());
  equal(Array.isArray((batch as { batches: unknown[] }).batches), true);
  const latin1 = new Uint8Array([...utf8("MSH|^~\\&|A\rPID|1||||M"), 0xfc, ...utf8("ller\r")]);
  const decoded = await decodeBody(
    latin1,
    "x-application/hl7-v2+er7; charset=iso-8859-1",
    limits(),
  );
  equal(
    (decoded as { segments: { PID: Record<string, { "1": string }[]>[] } }).segments
      .PID[0]["5"][0]["1"],
    "Müller",
  );
});

Deno.test("hl7 bodies: data without the codec's shape is sent as JSON (a transform to FHIR)", () => {
  for (const ct of ["x-application/hl7-v2+er7", "text/plain"]) {
    const out = encodeData({ resourceType: "Patient" }, ct);
    equal(out.contentType, "application/json", ct);
    equal(text(out.bytes), '{"resourceType":"Patient"}');
  }
  // The shape with no ER7 form (an MSH-2 that repeats a character) is JSON too.
  const broken = { segments: { MSH: [{ "1": "|", "2": "^^\\&" }] } };
  equal(encodeData(broken, "x-application/hl7-v2+er7").contentType, "application/json");
  // A string in text/plain is still the string.
  equal(text(encodeData("MSH|x", "text/plain").bytes), "MSH|x");
});

Deno.test("hl7 bodies: refusals are 400 invalid_hl7 and 413 hl7_too_many_* / hl7_too_large", async () => {
  await expectError(
    () => decodeBody(utf8("PID|1\r"), "x-application/hl7-v2+er7", limits()),
    400,
    "invalid_hl7",
  );
  await expectError(
    () => decodeBody(utf8("MSH|^~\\&|A\rpid|1\r"), "text/plain", limits()),
    400,
    "invalid_hl7",
    "pid",
  );
  await expectError(
    () =>
      decodeBody(utf8(`MSH|^~\\&|A\rOBX|${"x~".repeat(1001)}\r`), "application/hl7-v2", limits()),
    413,
    "hl7_too_many_repetitions",
  );
  await expectError(
    () => decodeBody(utf8(ER7), "application/hl7-v2", limits({ max_body_size: 20 })),
    413,
    "hl7_too_large",
  );
});

Deno.test("hl7 bodies: the header for routing metadata, from the message or a batch's first MSH", async () => {
  const h = hl7HeaderOfBody(utf8(ER7), "x-application/hl7-v2+er7", undefined)!;
  deepEqual(hl7Metadata(h), {
    "hl7.message_type": "ORU",
    "hl7.trigger_event": "R01",
    "hl7.structure": "ORU_R01",
    "hl7.control_id": "9",
    "hl7.version": "2.5",
    "hl7.sending_application": "LAB",
    "hl7.sending_facility": "NORTH",
    "hl7.receiving_application": "EHR",
    "hl7.receiving_facility": "SOUTH",
    "hl7.processing_id": "P",
  });
  equal(
    hl7HeaderOfBody(utf8("FHS|^~\\&\rBHS|^~\\&\r" + ER7), "text/plain", undefined)?.controlId,
    "9",
  );
  equal(hl7HeaderOfBody(utf8("hello"), "text/plain", undefined), null);
  await expectError(
    () => hl7HeaderOfBody(utf8("hello"), "application/hl7-v2", undefined),
    400,
    "invalid_hl7",
  );
  await expectError(
    () => hl7HeaderOfBody(utf8("FHS|^~\\&\rFTS|0\r"), "text/plain", undefined),
    400,
    "invalid_hl7",
  );
});
