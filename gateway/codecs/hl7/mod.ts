/**
 * HL7 v2 in ER7 (the pipe-and-hat text): the header of a message, acknowledgements, and the
 * lossless ER7 <-> JSON codec the gateway's middleware works on (docs/hl7.md describes the JSON).
 *
 * - `readHl7Header(text)` reads only the MSH segment, delimiters from MSH-1 and MSH-2.
 * - `buildAck(header, { code, text?, errors? })` writes an ACK in the message's delimiters and
 *   version; `readAck(text)` reads MSA and ERR back.
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
  type ReadAck,
  readAck,
} from "./ack.ts";
export { escapeHl7, unescapeHl7 } from "./escape.ts";
export { DEFAULT_HL7_LIMITS, type Hl7Limits, hl7Limits } from "./limits.ts";
