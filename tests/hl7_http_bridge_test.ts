/**
 * The HTTP bridge of issue 37: an HL7 v2 message posted to an `http` endpoint is decoded by the
 * HL7 codec (gateway/codecs/hl7/), so a JOLT transform reshapes it, `match` routes it by its
 * `hl7.*` metadata, and it reaches a REST service as JSON, or goes on as ER7 when nothing changed
 * it (or a transform changed it and kept the codec's shape).
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { hl7Samples, withCr } from "./support/hl7_samples.ts";

const ADT = [
  "MSH|^~\\&|REG|NORTH|EHR|SOUTH|20240102030405||ADT^A04^ADT_A01|CTRL-9|P|2.5.1",
  "EVN|A04|20240102030405",
  "PID|1||555^^^NORTH^MR||O\\T\\Brien^Pat^Q||19800101|F",
  "",
].join("\r");

const ORU = "MSH|^~\\&|LAB|NORTH|EHR|SOUTH|20240102||ORU^R01^ORU_R01|LAB-1|P|2.5\r" +
  "PID|1||777^^^NORTH^MR||Roe^Sam\rOBX|1|NM|2345-7^Glucose^LN||95|mg/dL|70-99|N|||F\r";

/** HL7 JSON -> a small patient document (a JOLT shift by segment and field number). */
const TO_PATIENT = JSON.stringify([{
  operation: "shift",
  spec: {
    segments: {
      MSH: { "0": { "10": { "0": { "1": "messageId" } } } },
      PID: {
        "0": {
          "3": { "*": { "1": "identifiers[]" } },
          "5": { "0": { "1": "family", "2": "given" } },
          "7": { "0": { "1": "birthDate" } },
        },
      },
    },
  },
}]);

/** Keeps the codec's shape: changes PID-8 (sex) and leaves the rest. */
const SET_SEX = JSON.stringify([{
  operation: "modify-overwrite-beta",
  // modify and default address array elements as "[0]" (shift says "0"), as Java JOLT does.
  spec: { segments: { PID: { "[0]": { "8": { "[0]": { "1": "U" } } } } } },
}]);

function config(upstream: string): string {
  return `
transforms_path = "{DIR}/transforms"
[endpoints.hl7http]
service = "http"
[endpoints.hl7http.options]
path_prefix = "/hl7"
[endpoints.raw]
service = "http"
[endpoints.raw.options]
path_prefix = "/raw"
[endpoints.keep]
service = "http"
[endpoints.keep.options]
path_prefix = "/keep"
[endpoints.same]
service = "http"
[endpoints.same.options]
path_prefix = "/same"

[middleware.to_patient]
type = "transform"
[middleware.to_patient.options]
spec_path = "to_patient.json"
[middleware.set_sex]
type = "transform"
[middleware.set_sex.options]
spec_path = "set_sex.json"
[middleware.identity]
type = "transform"
[middleware.identity.options]
spec_path = "identity.json"

[backends.adt]
service = "http"
match = { "hl7.message_type" = "ADT" }
[backends.adt.options]
base_url = "${upstream}/adt"
[backends.oru]
service = "echo"
match = { "hl7.message_type" = "ORU", "hl7.sending_facility" = "NORTH" }
[backends.echo]
service = "echo"
[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstream}/keep"

[pipelines.hl7http]
endpoints = ["hl7http"]
middleware = ["to_patient"]
backends = ["adt", "oru"]
[pipelines.raw]
endpoints = ["raw"]
backends = ["echo"]
[pipelines.keep]
endpoints = ["keep"]
middleware = ["set_sex"]
backends = ["up"]
[pipelines.same]
endpoints = ["same"]
middleware = ["identity"]
backends = ["up"]
`;
}

async function withBridge(
  fn: (url: string, up: ReturnType<typeof startUpstream>) => Promise<void>,
): Promise<void> {
  const up = startUpstream();
  const gw = await startTestGateway(config(up.url), {
    logLevel: "warn",
    files: {
      "transforms/to_patient.json": TO_PATIENT,
      "transforms/set_sex.json": SET_SEX,
      // Copies every key: the body is parsed into the codec's JSON and written back as ER7.
      "transforms/identity.json": JSON.stringify([{ operation: "shift", spec: { "*": "&" } }]),
    },
  });
  try {
    await fn(gw.url, up);
  } finally {
    await gw.stop();
    await up.stop();
  }
}

const post = (url: string, contentType: string, body: string) =>
  fetch(url, { method: "POST", headers: { "content-type": contentType }, body });

Deno.test("bridge: ADT posted as x-application/hl7-v2+er7 is routed by hl7.* and reaches REST as JSON", () =>
  withBridge(async (url, up) => {
    const res = await post(`${url}/hl7/patients`, "x-application/hl7-v2+er7", ADT);
    assertEquals(res.status, 200);
    await res.body?.cancel();
    assertEquals(up.received.length, 1);
    const sent = up.received[0];
    assertEquals(new URL(sent.url).pathname, "/adt/patients");
    assertEquals(sent.headers.get("content-type"), "application/json");
    assertEquals(JSON.parse(new TextDecoder().decode(sent.body)), {
      messageId: "CTRL-9",
      identifiers: ["555"],
      family: "O&Brien", // \T\ decoded
      given: "Pat",
      birthDate: "19800101",
    });
  }));

Deno.test("bridge: ORU as text/plain starting with MSH routes to the ORU backend with its metadata", () =>
  withBridge(async (url, up) => {
    const res = await post(`${url}/hl7/results`, "text/plain; charset=utf-8", ORU);
    assertEquals(res.status, 200);
    const echoed = await res.json();
    assertEquals(up.received.length, 0);
    assertEquals(echoed.data, {
      messageId: "LAB-1",
      identifiers: ["777"],
      family: "Roe",
      given: "Sam",
    });
    const m = echoed.metadata;
    assertEquals(
      [m["hl7.message_type"], m["hl7.trigger_event"], m["hl7.structure"], m["hl7.control_id"]],
      ["ORU", "R01", "ORU_R01", "LAB-1"],
    );
    assertEquals(
      [m["hl7.version"], m["hl7.sending_application"], m["hl7.sending_facility"]],
      ["2.5", "LAB", "NORTH"],
    );
    assertEquals(
      [m["hl7.receiving_application"], m["hl7.receiving_facility"], m["hl7.processing_id"]],
      ["EHR", "SOUTH", "P"],
    );
  }));

Deno.test("bridge: without a transform the codec's JSON is what middleware sees (echo shows it)", () =>
  withBridge(async (url) => {
    const res = await post(`${url}/raw`, "application/hl7-v2", ADT);
    assertEquals(res.status, 200);
    const echoed = await res.json();
    assertEquals(echoed.content.format, "hl7");
    assertEquals(echoed.data.order, ["MSH", "EVN", "PID"]);
    assertEquals(echoed.data.segments.PID[0]["5"], [{ "1": "O&Brien", "2": "Pat", "3": "Q" }]);
    assertEquals(echoed.metadata["hl7.trigger_event"], "A04");
    // text/plain that is not HL7 stays text, with no hl7.* metadata.
    const text = await (await post(`${url}/raw`, "text/plain", "MSHELL is not a segment")).json();
    assertEquals(text.data, "MSHELL is not a segment");
    assertEquals(text.metadata["hl7.message_type"], undefined);
  }));

Deno.test("bridge: a transform that keeps the codec's shape sends ER7 on, byte for byte elsewhere", () =>
  withBridge(async (url, up) => {
    const res = await post(`${url}/keep`, "x-application/hl7-v2+er7", ADT);
    assertEquals(res.status, 200);
    await res.body?.cancel();
    const sent = up.received[0];
    assertEquals(sent.headers.get("content-type"), "x-application/hl7-v2+er7");
    assertEquals(new TextDecoder().decode(sent.body), ADT.replace("|19800101|F", "|19800101|U"));
  }));

Deno.test("bridge: the shipped sample messages (hl7-standard 1.0.4, hl7 1.1.1) come back byte for byte", () =>
  withBridge(async (url, up) => {
    const samples = await hl7Samples();
    for (const { name, text } of samples) {
      const res = await post(`${url}/same`, "x-application/hl7-v2+er7", withCr(text));
      assertEquals(res.status, 200, name);
      await res.body?.cancel();
    }
    assertEquals(up.received.length, samples.length);
    samples.forEach(({ name, text }, i) => {
      // Parsed by the transform into the codec's JSON, written back as ER7 by the gateway.
      assertEquals(new TextDecoder().decode(up.received[i].body), withCr(text), name);
      assertEquals(up.received[i].headers.get("content-type"), "x-application/hl7-v2+er7");
    });
  }));

Deno.test("bridge: a declared HL7 body that is not HL7 is 400 invalid_hl7; size limits are 413", () =>
  withBridge(async (url, up) => {
    const bad = await post(`${url}/hl7`, "x-application/hl7-v2+er7", "PID|1||2\r");
    assertEquals(bad.status, 400);
    assertEquals((await bad.json()).error.code, "invalid_hl7");
    const delims = await post(`${url}/hl7`, "x-application/hl7-v2+er7", "MSH|^^\\&|A\r");
    assertEquals(delims.status, 400);
    const body = await delims.json();
    assertEquals(body.error.code, "invalid_hl7");
    assert(String(body.error.message).includes("MSH-2"));
    const wide = await post(
      `${url}/raw`,
      "x-application/hl7-v2+er7",
      `MSH|^~\\&|A\rOBX|${"a^".repeat(200)}\r`,
    );
    assertEquals(wide.status, 413);
    assertEquals((await wide.json()).error.code, "hl7_too_many_components");
    assertEquals(up.received.length, 0);
  }));
