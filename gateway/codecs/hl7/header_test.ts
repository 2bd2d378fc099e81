import { deepEqual, equal, throws } from "node:assert/strict";
import { Hl7Error, readHl7Header } from "./mod.ts";

const ADT = "MSH|^~\\&|ADT1^1.2.3^ISO|GOOD HEALTH|GHH LAB|ELAB-3|198808181126|SECURITY|" +
  "ADT^A01^ADT_A01|MSG00001|P^T|2.5.1^USA|||AL|NE\rEVN|A01|198808181123\r";

Deno.test("readHl7Header: every header value, HD components kept as written", () => {
  deepEqual(readHl7Header(ADT), {
    fieldSeparator: "|",
    encodingCharacters: "^~\\&",
    sendingApplication: "ADT1^1.2.3^ISO",
    sendingFacility: "GOOD HEALTH",
    receivingApplication: "GHH LAB",
    receivingFacility: "ELAB-3",
    dateTime: "198808181126",
    messageType: "ADT",
    triggerEvent: "A01",
    structure: "ADT_A01",
    controlId: "MSG00001",
    processingId: "P^T",
    version: "2.5.1",
    acceptAckType: "AL",
    applicationAckType: "NE",
  });
});

Deno.test("readHl7Header: delimiters come from MSH-1 and MSH-2, not assumed", () => {
  const h = readHl7Header("MSH#$*/!#A#F#B#G#1##X$Y$Z#7#P#2.3\r");
  equal(h.fieldSeparator, "#");
  equal(h.encodingCharacters, "$*/!");
  equal(h.messageType, "X");
  equal(h.triggerEvent, "Y");
  equal(h.structure, "Z");
  equal(h.controlId, "7");
  equal(h.version, "2.3");
  // A v2.7 truncation character is a fifth encoding character.
  const v27 = readHl7Header("MSH|^~\\&#|A||||||ADT^A04|9|P|2.7\n");
  equal(v27.encodingCharacters, "^~\\&#");
  equal(v27.triggerEvent, "A04");
});

Deno.test("readHl7Header: a BOM and blank space before MSH are tolerated; LF ends the segment", () => {
  const h = readHl7Header("\uFEFF \r\nMSH|^~\\&|A|B|C|D|||ADT^A08|77|P|2.4\nPID|||1\n");
  equal(h.controlId, "77");
  equal(h.version, "2.4");
  equal(h.structure, "");
  equal(h.acceptAckType, "");
});

Deno.test("readHl7Header: refusals carry a code, the segment and the field", () => {
  const refuses = (text: string, code: string, field?: number) =>
    throws(() => readHl7Header(text), (e: unknown) => {
      equal((e as Hl7Error).code, code, text);
      equal((e as Hl7Error).field, field, text);
      return e instanceof Hl7Error;
    });
  refuses("", "no_msh");
  refuses("PID|1\r", "no_msh");
  refuses("\x00\x01binary", "no_msh");
  refuses("MSH", "bad_delimiters", 1);
  refuses("MSHA^~\\&A", "bad_delimiters", 1);
  refuses("MSH|^~\\|A", "bad_delimiters", 2); // three encoding characters
  refuses("MSH|^~\\&#$|A", "bad_delimiters", 2); // six
  refuses("MSH|^^\\&|A", "bad_delimiters", 2); // repeated
  refuses("MSH|^~|&|A", "bad_delimiters", 2); // the field separator inside MSH-2
  refuses("MSH|^~\\1|A", "bad_delimiters", 2); // a digit
  refuses(`MSH|^~\\&|${"x".repeat(70_000)}`, "too_large");
});
