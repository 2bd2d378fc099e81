/**
 * HL7 v2 in ER7 (the pipe-and-hat text): the header of a message, acknowledgements, and the
 * lossless ER7 <-> JSON codec the gateway's middleware works on (docs/hl7.md describes the JSON).
 *
 * - `readHl7Header(text)` reads only the MSH segment, delimiters from MSH-1 and MSH-2.
 * - `buildAck(header, { code, text?, errors? })` writes an ACK in the message's delimiters and
 *   version; `readAck(text)` reads MSA and ERR back.
 * - `parseHl7(text, limits?)` and `formatHl7(json)`: ER7 <-> JSON, byte-identical both ways for a
 *   valid message. A message is `{ segments: { PID: [occurrence…] }, order, terminator }`; an
 *   occurrence's fields are keyed `"1"`…`"n"`, a field is always an array of repetitions, a
 *   repetition an object of components `"1"`…`"n"` (sub-components beside them as `"n.2"`…), so
 *   `PID-5.1` is always `segments.PID[0]["5"][0]["1"]`. Empty positions are left out (`"#"` counts
 *   trailing ones), HL7's null `""` is `null`, `\F\ \S\ \T\ \R\` are decoded in leaves and other
 *   escapes kept as written. Batches: `{ FHS?, batches: [{ BHS?, messages, BTS? }], FTS? }`.
 * - Every refusal is an `Hl7Error` with a stable `code` and, when known, `segment` and `field`.
 *
 * @example
 * ```ts
 * import { buildAck, readAck, readHl7Header } from "./mod.ts";
 *
 * const message = "MSH|^~\\&|LAB|NORTH|EHR|SOUTH|20240102030405||ORU^R01^ORU_R01|42|P|2.5.1\r" +
 *   "PID|1||123^^^NORTH^MR||Doe^Jane\r";
 * const header = readHl7Header(message);
 * console.log(header.messageType, header.triggerEvent, header.controlId); // ORU R01 42
 * const ack = buildAck(header, { code: "AE", errors: [{ code: "207", text: "database down" }] });
 * const back = readAck(ack);
 * console.log(back.code, back.controlId, back.errors[0].text); // AE 42 database down
 * ```
 *
 * @example
 * ```ts
 * import { formatHl7, type Hl7Message, parseHl7 } from "./mod.ts";
 *
 * const text = "MSH|^~\\&|LAB||||||ORU^R01|7|P|2.5\rPID|1||123^^^NORTH&1.2.3&ISO||O\\T\\Brien^Pat\r";
 * const json = parseHl7(text) as Hl7Message;
 * const [pid] = json.segments.PID;
 * console.log(pid["5"]); // [ { "1": "O&Brien", "2": "Pat" } ]
 * console.log(pid["3"]); // [ { "1": "123", "4": "NORTH", "4.2": "1.2.3", "4.3": "ISO" } ]
 * console.log(formatHl7(json) === text); // true
 * ```
 *
 * @module
 */

export { Hl7Error, type Hl7ErrorCode } from "./error.ts";
export { DEFAULT_DELIMITERS, type Hl7Delimiters } from "./delimiters.ts";
export { type Hl7Header, readHl7Header } from "./header.ts";
export {
  type AckCode,
  type AckOptions,
  buildAck,
  type Hl7ErrorDetail,
  hl7Timestamp,
  newControlId,
  type ReadAck,
  readAck,
} from "./ack.ts";
export { escapeHl7, unescapeHl7 } from "./escape.ts";
export { DEFAULT_HL7_LIMITS, type Hl7Limits, hl7Limits } from "./limits.ts";
export { parseHl7 } from "./parse.ts";
export { HL7_METADATA_KEYS, hl7Metadata, readFirstHl7Header } from "./metadata.ts";
export { formatHl7, looksLikeHl7Json } from "./format.ts";
export {
  type Hl7Batch,
  type Hl7BatchGroup,
  type Hl7Json,
  type Hl7Leaf,
  type Hl7Message,
  type Hl7Repetition,
  type Hl7Segment,
  type Hl7Terminator,
  isHl7Batch,
} from "./json.ts";
