/**
 * Writing P-DATA-TF PDUs that carry one PDV (PS3.8 9.3.5): the 12 bytes in front of a value (PDU
 * type and length, PDV item length, presentation context id, message control header).
 */
import { P_DATA_TF } from "./pdu_reader.ts";
import { allocate } from "./slab.ts";

/** Message control header bit: the PDV holds command bytes (else dataset bytes). */
export const COMMAND = 0x01;
/** Message control header bit: the PDV is the last fragment of its message. */
export const LAST = 0x02;

/** The PDU and PDV headers of a P-DATA-TF holding one PDV of `valueLength` bytes. */
export function pdvHeader(contextId: number, control: number, valueLength: number): Uint8Array {
  const out = allocate(12);
  writeHeader(out, contextId, control, valueLength);
  return out;
}

/** A whole P-DATA-TF PDU holding `value` as one PDV. */
export function pdvPdu(contextId: number, control: number, value: Uint8Array): Uint8Array {
  const out = allocate(12 + value.byteLength);
  writeHeader(out, contextId, control, value.byteLength);
  out.set(value, 12);
  return out;
}

function writeHeader(out: Uint8Array, contextId: number, control: number, length: number): void {
  out[0] = P_DATA_TF;
  setU32(out, 2, length + 6);
  setU32(out, 6, length + 2);
  out[10] = contextId;
  out[11] = control;
}

/** 32-bit big-endian integer at `at`. */
function setU32(out: Uint8Array, at: number, v: number): void {
  out[at] = v >>> 24;
  out[at + 1] = (v >>> 16) & 0xff;
  out[at + 2] = (v >>> 8) & 0xff;
  out[at + 3] = v & 0xff;
}
