/** The FHIR AuditEvent of an HL7 v2 message's record: an import from the sending facility. */
import { assertEquals } from "../../tests/assert.ts";
import type { AuditEntry } from "./entry.ts";
import { auditEventOf } from "./fhir_event.ts";

Deno.test("an mllp record becomes a DICOM Import AuditEvent naming the message, not its content", () => {
  const entry: AuditEntry = {
    event: "request",
    time: "2024-01-02T03:04:05.000Z",
    request_id: "r-1",
    pipeline: "adt",
    endpoint: "adt_feed",
    protocol: "mllp",
    client_address: "10.0.0.7",
    method: "ADT^A01",
    hl7_message_type: "ADT",
    hl7_trigger_event: "A01",
    hl7_control_id: "MSG-1",
    hl7_sending_facility: "NORTH",
    hl7_ack_code: "AE",
    status: 502,
    outcome: "error",
    error_code: "backend_unavailable",
  };
  const e = auditEventOf(entry, "edge-1") as {
    type: unknown;
    action: string;
    outcome: string;
    outcomeDesc: string;
    agent: { who: unknown; network?: unknown }[];
    entity: {
      name: string;
      description?: string;
      detail?: { type: string; valueString: string }[];
    }[];
  };
  assertEquals(e.type, {
    system: "http://dicom.nema.org/resources/ontology/DCM",
    code: "110107",
    display: "Import",
  });
  assertEquals([e.action, e.outcome, e.outcomeDesc], ["C", "8", "502 backend_unavailable"]);
  assertEquals(e.agent[0].who, { display: "NORTH" });
  assertEquals(e.agent[0].network, { address: "10.0.0.7", type: "2" });
  const request = e.entity.find((x) => x.name === "request");
  assertEquals(request?.description, "HL7 ADT^A01 control id MSG-1");
  assertEquals(request?.detail?.find((d) => d.type === "hl7_ack_code")?.valueString, "AE");
});
