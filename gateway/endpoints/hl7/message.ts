/**
 * An HL7 v2 message as a RequestEnvelope: protocol `mllp`, method `POST`, path `/`, the ER7 text
 * as the body (`x-application/hl7-v2+er7`, bytes as received), and the header's facts as metadata
 * (`hl7.message_type`, `hl7.trigger_event`, `hl7.structure`, `hl7.control_id`, `hl7.version`,
 * `hl7.sending_application`, `hl7.sending_facility`, `hl7.receiving_application`,
 * `hl7.receiving_facility`, `hl7.processing_id`) beside `endpoint`, `service` and `remote_addr`.
 */
import type { Hl7Header } from "../../codecs/mod.ts";
import { Body, RequestEnvelope } from "../../envelope.ts";

/** The media type of an HL7 v2 body. */
export const HL7_ER7 = "x-application/hl7-v2+er7";

/** The routing metadata of a message's header. */
export function hl7Metadata(h: Hl7Header): Record<string, string> {
  return {
    "hl7.message_type": h.messageType,
    "hl7.trigger_event": h.triggerEvent,
    "hl7.structure": h.structure,
    "hl7.control_id": h.controlId,
    "hl7.version": h.version,
    "hl7.sending_application": h.sendingApplication,
    "hl7.sending_facility": h.sendingFacility,
    "hl7.receiving_application": h.receivingApplication,
    "hl7.receiving_facility": h.receivingFacility,
    "hl7.processing_id": h.processingId,
  };
}

/** The envelope of one received message. */
export function hl7Envelope(
  endpoint: string,
  header: Hl7Header,
  payload: Uint8Array,
  remoteAddr: string | undefined,
  signal: AbortSignal,
): RequestEnvelope {
  return new RequestEnvelope({
    id: crypto.randomUUID(),
    protocol: "mllp",
    method: "POST",
    path: "/",
    headers: new Headers({ "content-type": HL7_ER7 }),
    metadata: {
      endpoint,
      service: "hl7",
      ...(remoteAddr ? { remote_addr: remoteAddr } : {}),
      ...hl7Metadata(header),
    },
    body: new Body(payload, HL7_ER7),
    endpoint,
    remoteAddr,
    signal,
  });
}
