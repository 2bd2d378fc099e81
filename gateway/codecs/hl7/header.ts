/** The MSH segment of a message read into its header values, with nothing else parsed. */
import { Hl7Error } from "./error.ts";
import { type Hl7Delimiters, readDelimiters } from "./delimiters.ts";
import { rawFields, textStart } from "./segments.ts";

/**
 * What the MSH segment says, values as written (escape sequences kept; the components of HD fields
 * such as `APP^1.2.3^ISO` joined as written); an absent value is the empty string.
 */
export interface Hl7Header {
  /** MSH-1, e.g. `|`. */
  fieldSeparator: string;
  /** MSH-2, e.g. `^~\&`. */
  encodingCharacters: string;
  /** MSH-3. */
  sendingApplication: string;
  /** MSH-4. */
  sendingFacility: string;
  /** MSH-5. */
  receivingApplication: string;
  /** MSH-6. */
  receivingFacility: string;
  /** MSH-7, e.g. `20240102030405`. */
  dateTime: string;
  /** MSH-9.1, e.g. `ADT`. */
  messageType: string;
  /** MSH-9.2, e.g. `A01`. */
  triggerEvent: string;
  /** MSH-9.3, e.g. `ADT_A01` (v2.3.1+). */
  structure: string;
  /** MSH-10. */
  controlId: string;
  /** MSH-11 as written, e.g. `P` or `P^T`. */
  processingId: string;
  /** MSH-12.1, e.g. `2.5.1`. */
  version: string;
  /** MSH-15 (enhanced mode: `AL`, `NE`, `ER`, `SU`). */
  acceptAckType: string;
  /** MSH-16. */
  applicationAckType: string;
}

/** The longest MSH segment readHl7Header reads (characters). */
export const MAX_MSH_LENGTH = 65_536;

/** The header of a split MSH segment (`fields` indexed by HL7 number). */
export function headerOfFields(fields: string[], d: Hl7Delimiters): Hl7Header {
  const f = (n: number) => fields[n] ?? "";
  const type = f(9).split(d.component);
  return {
    fieldSeparator: d.field,
    encodingCharacters: d.encoding,
    sendingApplication: f(3),
    sendingFacility: f(4),
    receivingApplication: f(5),
    receivingFacility: f(6),
    dateTime: f(7),
    messageType: type[0] ?? "",
    triggerEvent: type[1] ?? "",
    structure: type[2] ?? "",
    controlId: f(10),
    processingId: f(11),
    version: f(12).split(d.component)[0],
    acceptAckType: f(15),
    applicationAckType: f(16),
  };
}

/**
 * Read the header of an ER7 message: only its first segment, which must be an MSH (after a byte
 * order mark or blank space); delimiters from MSH-1 and MSH-2.
 */
export function readHl7Header(text: string): Hl7Header {
  const start = textStart(text);
  if (text.slice(start, start + 3) !== "MSH") {
    throw new Hl7Error("no_msh", "the message does not start with an MSH segment", {
      segment: "MSH",
    });
  }
  const d = readDelimiters(text, start);
  let end = start;
  const limit = Math.min(text.length, start + MAX_MSH_LENGTH + 1);
  while (end < limit) {
    const c = text.charCodeAt(end);
    if (c === 13 || c === 10) break;
    end++;
  }
  if (end - start > MAX_MSH_LENGTH) {
    throw new Hl7Error("too_large", `the MSH segment is longer than ${MAX_MSH_LENGTH} characters`, {
      segment: "MSH",
    });
  }
  return headerOfFields(rawFields(text.slice(start, end), d.field), d);
}
