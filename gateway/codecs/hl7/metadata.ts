/** The routing metadata of an HL7 v2 message (contract of issue 37, item 4), from its header. */
import type { Hl7Header } from "./header.ts";
import { readHl7Header } from "./header.ts";
import { Hl7Error } from "./error.ts";
import { textStart } from "./segments.ts";

/** The envelope metadata keys an HL7 message sets, by header value. */
export const HL7_METADATA_KEYS = {
  "hl7.message_type": "messageType",
  "hl7.trigger_event": "triggerEvent",
  "hl7.structure": "structure",
  "hl7.control_id": "controlId",
  "hl7.version": "version",
  "hl7.sending_application": "sendingApplication",
  "hl7.sending_facility": "sendingFacility",
  "hl7.receiving_application": "receivingApplication",
  "hl7.receiving_facility": "receivingFacility",
  "hl7.processing_id": "processingId",
} as const satisfies Record<string, keyof Hl7Header>;

/** `hl7.message_type`, `hl7.trigger_event`, … for a header (values as written, `""` when absent). */
export function hl7Metadata(header: Hl7Header): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, field] of Object.entries(HL7_METADATA_KEYS)) out[key] = header[field];
  return out;
}

/** The longest stretch searched for a batch's first MSH (characters). */
const MAX_BATCH_HEAD = 1024 * 1024;

/**
 * The header of a text's first message: its MSH, or in a batch (FHS/BHS first) the first MSH
 * within its first MiB. Throws Hl7Error as readHl7Header does.
 */
export function readFirstHl7Header(text: string): Hl7Header {
  const start = textStart(text);
  const head = text.slice(start, start + 3);
  if (head !== "FHS" && head !== "BHS") return readHl7Header(text);
  const limit = Math.min(text.length, start + MAX_BATCH_HEAD);
  for (let i = start; i < limit;) {
    let end = i;
    while (end < limit && text.charCodeAt(end) !== 13 && text.charCodeAt(end) !== 10) end++;
    if (text.startsWith("MSH", i)) return readHl7Header(text.slice(i));
    i = end + 1;
  }
  throw new Hl7Error("no_msh", "the batch has no MSH segment", { segment: "MSH" });
}
