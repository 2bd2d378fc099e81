import { deepEqual, equal, throws } from "node:assert/strict";
import {
  formatHl7,
  Hl7Error,
  type Hl7Json,
  hl7Limits,
  type Hl7Message,
  isHl7Batch,
  parseHl7,
} from "./mod.ts";

const ADT = [
  "MSH|^~\\&|ADT1|GOOD HEALTH|GHH LAB|ELAB-3|198808181126|SECURITY|ADT^A01^ADT_A01|MSG00001|P|2.5.1",
  "EVN|A01|198808181123",
  "PID|1||PATID1234^^^GOOD HEALTH^MR~123456789^^^USSSA^SS||EVERYMAN^ADAM^A^III||19610615|M",
  "NK1|1|NUCLEAR^NELDA^W|SPO^SPOUSE",
  "NK1|2|NUCLEAR^NED|SON",
  "ZPI|custom|1^2",
  "",
].join("\r");

const message = (text: string) => parseHl7(text) as Hl7Message;

/** Component 1 of the first repetition of a field of a segment's first occurrence. */
const leafOf = (m: Hl7Message, segment: string, field: number) =>
  (m.segments[segment][0][field] as Record<string, unknown>[])[0]["1"];

/** Parse, check the text comes back byte for byte, return the JSON. */
function roundTrip(text: string): Hl7Json {
  const json = parseHl7(text);
  equal(formatHl7(json), text);
  // And the JSON survives JSON text (what a middleware gets and gives back).
  equal(formatHl7(JSON.parse(JSON.stringify(json))), text);
  return json;
}

Deno.test("parseHl7: segments by name with occurrences, order, fields numbered from 1", () => {
  const m = message(ADT);
  deepEqual(m.order, ["MSH", "EVN", "PID", "NK1", "NK1", "ZPI"]);
  equal(m.terminator, "\r");
  equal(m.unterminated, undefined);
  deepEqual(m.segments.MSH[0]["1"], [{ "1": "|" }]);
  deepEqual(m.segments.MSH[0]["2"], [{ "1": "^~\\&" }]);
  deepEqual(m.segments.MSH[0]["9"], [{ "1": "ADT", "2": "A01", "3": "ADT_A01" }]);
  deepEqual(m.segments.PID[0], {
    "1": [{ "1": "1" }],
    "3": [{ "1": "PATID1234", "4": "GOOD HEALTH", "5": "MR" }, {
      "1": "123456789",
      "4": "USSSA",
      "5": "SS",
    }],
    "5": [{ "1": "EVERYMAN", "2": "ADAM", "3": "A", "4": "III" }],
    "7": [{ "1": "19610615" }],
    "8": [{ "1": "M" }],
  });
  deepEqual(m.segments.NK1.map((s) => s["2"]), [[{ "1": "NUCLEAR", "2": "NELDA", "3": "W" }], [{
    "1": "NUCLEAR",
    "2": "NED",
  }]]);
  deepEqual(m.segments.ZPI[0], { "1": [{ "1": "custom" }], "2": [{ "1": "1", "2": "2" }] });
  roundTrip(ADT);
});

Deno.test("parseHl7: one path whether a field repeats or a component has sub-components", () => {
  const one = message("MSH|^~\\&|A\rPID|||42^^^AUTH\r").segments.PID[0]["3"];
  const more = message("MSH|^~\\&|A\rPID|||42^^^AUTH&1.2.3&ISO~7\r").segments.PID[0]["3"];
  const first = (f: typeof one) => (f as Record<string, unknown>[])[0];
  equal(first(one)["1"], "42");
  equal(first(more)["1"], "42");
  equal(first(one)["4"], "AUTH");
  equal(first(more)["4"], "AUTH"); // the first sub-component stays at "4"
  equal(first(more)["4.2"], "1.2.3");
  equal(first(more)["4.3"], "ISO");
  deepEqual((more as unknown[])[1], { "1": "7" });
});

Deno.test("parseHl7: empty positions left out, trailing ones counted, HL7 null is JSON null", () => {
  const text = 'MSH|^~\\&|A||\rPV1|1|""|^^|~~|x^""^^|a&&|&&b||\r';
  const m = roundTrip(text) as Hl7Message;
  deepEqual(m.segments.MSH[0]["#"], 5);
  deepEqual(m.segments.PV1[0], {
    "1": [{ "1": "1" }],
    "2": [{ "1": null }],
    "3": [{ "#": 3 }],
    "4": [{}, {}, {}],
    "5": [{ "1": "x", "2": null, "#": 4 }],
    "6": [{ "1": "a", "1.#": 3 }],
    "7": [{ "1.3": "b" }],
    "#": 9,
  });
});

Deno.test("parseHl7: \\F\\ \\S\\ \\T\\ \\R\\ decoded in leaves; other escapes kept as written", () => {
  const text =
    "MSH|^~\\&|A\rOBX|1|FT|||line 1\\.br\\a\\F\\b\\S\\c\\T\\d\\R\\e \\E\\ \\X0D0A\\ \\H\\x\\N\\\r";
  const m = roundTrip(text) as Hl7Message;
  equal(
    leafOf(m, "OBX", 5),
    "line 1\\.br\\a|b^c&d~e \\E\\ \\X0D0A\\ \\H\\x\\N\\",
  );
});

Deno.test("parseHl7: delimiters from MSH-1/MSH-2, including a v2.7 truncation character", () => {
  const text = "MSH#$*/!#APP#FAC##X$Y#1#P#2.3\rPID###1$2$3*4!5/F/6\r";
  const m = roundTrip(text) as Hl7Message;
  deepEqual(m.segments.PID[0]["3"], [{ "1": "1", "2": "2", "3": "3" }, {
    "1": "4",
    "1.2": "5#6",
  }]);
  const v27 = "MSH|^~\\&#|A|||||ADT^A04|1|P|2.7\rPID|||1||Apt \\P\\5#\r";
  equal(leafOf(roundTrip(v27) as Hl7Message, "PID", 5), "Apt \\P\\5#");
});

Deno.test("parseHl7: LF and CRLF are read; written back with the first terminator found", () => {
  const lf = "MSH|^~\\&|A\nPID|1\n";
  equal((roundTrip(lf) as Hl7Message).terminator, "\n");
  const crlf = "MSH|^~\\&|A\r\nPID|1";
  const m = roundTrip(crlf) as Hl7Message;
  equal(m.terminator, "\r\n");
  equal(m.unterminated, true);
  // Mixed terminators and blank lines come back uniform; a BOM and blank space before are dropped.
  equal(
    formatHl7(parseHl7("\uFEFF\n MSH|^~\\&|A\r\nPID|1\rPV1|1\n\nZZ1|x")),
    "MSH|^~\\&|A\r\nPID|1\r\nPV1|1\r\nZZ1|x",
  );
});

Deno.test("parseHl7: batches (FHS/BHS/BTS/FTS) keep their messages apart", () => {
  const text = [
    "FHS|^~\\&|FILEAPP|||||20240101",
    "BHS|^~\\&|BATCHAPP",
    "MSH|^~\\&|A||||||ADT^A01|1|P|2.4",
    "PID|1||11",
    "MSH|^~\\&|A||||||ADT^A08|2|P|2.4",
    "PID|1||22",
    "PID|2||23",
    "BTS|2",
    "FTS|1",
    "",
  ].join("\r");
  const json = roundTrip(text);
  if (!isHl7Batch(json)) throw new Error("not a batch");
  deepEqual(json.FHS?.["3"], [{ "1": "FILEAPP" }]);
  equal(json.batches.length, 1);
  const [first, second] = json.batches[0].messages;
  deepEqual(first.segments.PID.map((p) => p["3"]), [[{ "1": "11" }]]);
  deepEqual(second.segments.PID.map((p) => p["3"]), [[{ "1": "22" }], [{ "1": "23" }]]);
  deepEqual(second.order, ["MSH", "PID", "PID"]);
  deepEqual(json.batches[0].BTS, { "1": [{ "1": "2" }] });
  deepEqual(json.FTS, { "1": [{ "1": "1" }] });
  // Two messages without batch headers are a batch with one group and no headers.
  const two = roundTrip("MSH|^~\\&|A\rPID|1\rMSH|^~\\&|B\r");
  equal(isHl7Batch(two) && two.batches[0].messages.length, 2);
  // A BHS...BTS batch without FHS.
  const bare = roundTrip("BHS|^~\\&|X\rMSH|^~\\&|A\rBTS|1\r");
  equal(isHl7Batch(bare) && bare.FHS, undefined);
});

Deno.test("parseHl7: refusals name the problem", () => {
  const code = (text: string, limits = hl7Limits()) => {
    try {
      parseHl7(text, limits);
    } catch (e) {
      if (!(e instanceof Hl7Error)) throw e;
      return `${e.code}${e.segment ? ` ${e.segment}` : ""}${e.field ? `-${e.field}` : ""}`;
    }
    return "parsed";
  };
  equal(code(""), "no_msh MSH");
  equal(code("PID|1\r"), "no_msh MSH");
  equal(code("\x00\x01\x02garbage"), "no_msh MSH");
  equal(code("MSH|^~\\&|A\rpid|1\r"), "bad_segment pid");
  equal(code("MSH|^~\\&|A\rPIDX|1\r"), "bad_segment PIDX");
  equal(code("MSH|^~\\&|A\rMSH#^~\\&#B\r"), "bad_delimiters MSH-2");
  equal(code("MSH|^~\\&|A\rFTS|1\r"), "bad_batch FTS");
  equal(code("FHS|^~\\&\rPID|1\r"), "bad_batch PID");
  equal(code("FHS|^~\\&\rFTS|1\rMSH|^~\\&\r"), "bad_batch MSH");
  equal(code("MSH|^~\\&|A\rBTS|1\rBTS|2\r"), "bad_batch BTS");
  equal(code("MSH|^~\\&|" + "x".repeat(100), hl7Limits({ maxBytes: 50 })), "too_large");
  equal(code("MSH|^~\\&|A\rPID|1\rPID|2\r", hl7Limits({ maxSegments: 2 })), "too_many_segments");
  equal(
    code("MSH|^~\\&|A\rPID" + "|x".repeat(11), hl7Limits({ maxFieldsPerSegment: 10 })),
    "too_many_fields PID",
  );
  equal(
    code("MSH|^~\\&|A\rPID|1|a~b~c\r", hl7Limits({ maxRepetitions: 2 })),
    "too_many_repetitions PID-2",
  );
  equal(
    code("MSH|^~\\&|A\rPID|1|a^b^c\r", hl7Limits({ maxComponents: 2 })),
    "too_many_components PID-2",
  );
  equal(
    code("MSH|^~\\&|A\rPID|1|a&b&c\r", hl7Limits({ maxComponents: 2 })),
    "too_many_components PID-2",
  );
  equal(code("MSH|^~\\&|A\rPID|1|a&b\r", hl7Limits({ maxComponents: 2 })), "parsed");
});

Deno.test("formatHl7: JSON a middleware built or changed is written with the same rules", () => {
  const m = message(ADT);
  // A new repetition, a changed component with delimiters in it, a null, a removed segment.
  (m.segments.PID[0]["5"] as unknown[]).push({ "1": "SMITH & SONS", "2": "A|B" });
  m.segments.PID[0]["8"] = [{ "1": null }];
  m.segments.PID[0]["19"] = [{ "1": "line\nbreak" }];
  delete (m.segments as Record<string, unknown>).ZPI;
  const out = formatHl7(m);
  equal(
    out.split("\r")[2],
    'PID|1||PATID1234^^^GOOD HEALTH^MR~123456789^^^USSSA^SS||EVERYMAN^ADAM^A^III~SMITH \\T\\ SONS^A\\F\\B||19610615|""|||||||||||line\\X0A\\break',
  );
  equal(out.includes("ZPI"), false);
  // Leniencies for hand-built JSON: a field as one repetition or a bare string, numbers as text,
  // no `order` (MSH first, then the segments by key), default delimiters without MSH-1/MSH-2.
  const built = formatHl7({
    segments: {
      MSH: [{ "9": [{ "1": "ADT", "2": "A04" }], "10": "7", "12": 2.5 }],
      PID: [{ "3": { "1": 123, "4": "NORTH" } }],
    },
  } as unknown as Hl7Json);
  equal(built, "MSH|^~\\&|||||||ADT^A04|7||2.5\rPID|||123^^^NORTH\r");
  // `order` entries without occurrences are skipped; unlisted occurrences follow.
  const reordered = formatHl7({
    segments: { MSH: [{}], PID: [{ "1": "1" }, { "1": "2" }], ZZZ: [{}] },
    order: ["MSH", "PID", "OBX"],
  } as unknown as Hl7Json);
  equal(reordered, "MSH|^~\\&\rPID|1\rPID|2\rZZZ\r");
});

Deno.test("formatHl7: JSON with no ER7 form is refused as bad_json, naming the place", () => {
  const refuses = (json: unknown, where: string) =>
    throws(() => formatHl7(json as Hl7Json), (e: unknown) => {
      equal((e as Hl7Error).code, "bad_json", where);
      equal(`${(e as Hl7Error).segment}-${(e as Hl7Error).field}`, where);
      return true;
    });
  refuses([], "MSH-undefined");
  refuses({ segments: { PID: [{}] } }, "MSH-undefined");
  refuses({ segments: { MSH: [{}], PID: [{ "x": 1 }] } }, "PID-undefined");
  refuses({ segments: { MSH: [{}], PID: [{ "3": [{ "1": true }] }] } }, "PID-3");
  refuses({ segments: { MSH: [{}], PID: [{ "3": [{ "a.b": "x" }] }] } }, "PID-3");
  refuses({ segments: { MSH: [{}], PID: [{ "3": [{ "#": 1e9 }] }] } }, "PID-3");
  refuses({ segments: { MSH: [{}], PID: [{ "#": 1e9 }] } }, "PID-undefined");
  refuses({ segments: { MSH: [{}], PID: [{ "3": [{ "500": "x" }] }] } }, "PID-3");
  refuses({ segments: { MSH: [{ "1": "|", "2": "^^\\&" }] } }, "MSH-2");
  refuses({ segments: { MSH: [{}], pid: [{}] } }, "pid-undefined");
  refuses({ segments: { MSH: [{}] }, order: ["PID", "MSH"] }, "MSH-undefined");
});
