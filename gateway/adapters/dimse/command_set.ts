/**
 * DIMSE command sets (group 0000, always Implicit VR Little Endian, PS3.7 E.1) to and from the
 * naturalized element maps dcmjs-dimse's commands hold (`{ CommandField: 1, MessageID: 7, ... }`),
 * without dcmjs's general dataset reader and writer. Only the command elements of PS3.7 are known;
 * a command with anything else is left to dcmjs (the functions answer undefined).
 */
import { allocate } from "./slab.ts";

/** Value representations that occur in command sets. */
type CommandVr = "UL" | "US" | "UI" | "AE" | "LO" | "AT";

/** The command elements of PS3.7 E.1 (and the retired ones dcmjs-dimse does not use, left out). */
const ELEMENTS: readonly [number, string, CommandVr][] = [
  [0x0000, "CommandGroupLength", "UL"],
  [0x0002, "AffectedSOPClassUID", "UI"],
  [0x0003, "RequestedSOPClassUID", "UI"],
  [0x0100, "CommandField", "US"],
  [0x0110, "MessageID", "US"],
  [0x0120, "MessageIDBeingRespondedTo", "US"],
  [0x0600, "MoveDestination", "AE"],
  [0x0700, "Priority", "US"],
  [0x0800, "CommandDataSetType", "US"],
  [0x0900, "Status", "US"],
  [0x0901, "OffendingElement", "AT"],
  [0x0902, "ErrorComment", "LO"],
  [0x0903, "ErrorID", "US"],
  [0x1000, "AffectedSOPInstanceUID", "UI"],
  [0x1001, "RequestedSOPInstanceUID", "UI"],
  [0x1002, "EventTypeID", "US"],
  [0x1005, "AttributeIdentifierList", "AT"],
  [0x1008, "ActionTypeID", "US"],
  [0x1020, "NumberOfRemainingSuboperations", "US"],
  [0x1021, "NumberOfCompletedSuboperations", "US"],
  [0x1022, "NumberOfFailedSuboperations", "US"],
  [0x1023, "NumberOfWarningSuboperations", "US"],
  [0x1030, "MoveOriginatorApplicationEntityTitle", "AE"],
  [0x1031, "MoveOriginatorMessageID", "US"],
];

const BY_ELEMENT = new Map(ELEMENTS.map(([e, name, vr]) => [e, { name, vr }]));
const BY_NAME = new Map(ELEMENTS.map(([e, name, vr]) => [name, { element: e, vr }]));

/** The C-STORE-RQ command field. */
export const C_STORE_RQ = 0x0001;
/** CommandDataSetType of a command without a dataset. */
export const NO_DATASET = 0x0101;

const LATIN1 = new TextDecoder("latin1");

/** Bytes `start` to `end` as text without their padding (trailing NUL or spaces, leading spaces). */
function text(bytes: Uint8Array, start: number, end: number): string {
  while (end > start && (bytes[end - 1] === 0 || bytes[end - 1] === 0x20)) end--;
  while (start < end && bytes[start] === 0x20) start++;
  // Command values are short (UIDs, AE titles): no TextDecoder call (an op) for them.
  if (end - start > 64) return LATIN1.decode(bytes.subarray(start, end));
  let raw = "";
  for (let i = start; i < end; i++) raw += String.fromCharCode(bytes[i]);
  return raw;
}

function u16(bytes: Uint8Array, at: number): number {
  return bytes[at] | (bytes[at + 1] << 8);
}

function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}

/**
 * Naturalized elements of an encoded command set, as dcmjs reads them; undefined when it holds an
 * element this module does not know or is truncated.
 */
export function decodeCommand(bytes: Uint8Array): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const size = bytes.byteLength;
  let at = 0;
  while (at + 8 <= size) {
    if (u16(bytes, at) !== 0x0000) return undefined;
    const known = BY_ELEMENT.get(u16(bytes, at + 2));
    const length = u32(bytes, at + 4);
    at += 8;
    if (!known || at + length > size) return undefined;
    if (known.name !== "CommandGroupLength") {
      const value = decodeValue(known.vr, at, length, bytes);
      if (value === undefined) return undefined;
      out[known.name] = value;
    }
    at += length;
  }
  return at === size ? out : undefined;
}

function decodeValue(vr: CommandVr, at: number, length: number, bytes: Uint8Array): unknown {
  switch (vr) {
    case "US":
      return length === 2 ? u16(bytes, at) : undefined;
    case "UL":
      return length === 4 ? u32(bytes, at) : undefined;
    case "AT": {
      // dcmjs keeps attribute tags as numbers (group << 16 | element).
      if (length % 4 !== 0) return undefined;
      const tags: number[] = [];
      for (let i = 0; i < length; i += 4) {
        tags.push(u16(bytes, at + i) * 0x10000 + u16(bytes, at + i + 2));
      }
      return tags.length === 1 ? tags[0] : tags;
    }
    default:
      return text(bytes, at, at + length);
  }
}

/**
 * Bytes a value takes (text padded to even length), or -1 when this module does not encode it
 * (UL and AT values, text outside printable ASCII, numbers out of range).
 */
function valueLength(vr: CommandVr, value: unknown): number {
  switch (vr) {
    case "US": {
      const n = Number(value);
      return Number.isInteger(n) && n >= 0 && n <= 0xffff ? 2 : -1;
    }
    case "UL":
    case "AT":
      return -1;
    default: {
      if (typeof value !== "string") return -1;
      for (let i = 0; i < value.length; i++) {
        const c = value.charCodeAt(i);
        if (c < 0x20 || c > 0x7e) return -1;
      }
      return value.length + (value.length % 2);
    }
  }
}

/** The elements of the command set being encoded, in tag order (reused: encoding is synchronous). */
const PRESENT: { element: number; vr: CommandVr; value: unknown }[] = [];

/**
 * A command set's bytes (group length first, elements in tag order), or undefined when an element
 * is not one this module encodes (dcmjs then writes it). Elements without a value are left out.
 * Written from one pass over the given elements (three command sets go out per C-FIND through
 * the gateway).
 */
export function encodeCommand(elements: Record<string, unknown>): Uint8Array | undefined {
  let groupLength = 0;
  let count = 0;
  for (const name in elements) {
    const value = elements[name];
    if (value === undefined || value === null) continue;
    const known = BY_NAME.get(name);
    if (!known || known.element === 0x0000) return undefined;
    const n = valueLength(known.vr, value);
    if (n < 0) return undefined;
    groupLength += 8 + n;
    // Insertion in tag order (a command set has a handful of elements).
    let i = count++;
    if (i === PRESENT.length) PRESENT.push({ element: 0, vr: "US", value: undefined });
    const slot = PRESENT[i];
    while (i > 0 && PRESENT[i - 1].element > known.element) {
      PRESENT[i] = PRESENT[i - 1];
      i--;
    }
    PRESENT[i] = slot;
    slot.element = known.element;
    slot.vr = known.vr;
    slot.value = value;
  }
  const out = allocate(12 + groupLength);
  out[4] = 4;
  setU32(out, 8, groupLength);
  let at = 12;
  for (let e = 0; e < count; e++) {
    const { element, vr, value } = PRESENT[e];
    PRESENT[e].value = undefined;
    out[at + 2] = element & 0xff;
    out[at + 3] = element >> 8;
    if (vr === "US") {
      out[at + 4] = 2;
      const n = Number(value);
      out[at + 8] = n & 0xff;
      out[at + 9] = n >> 8;
      at += 10;
      continue;
    }
    const text = value as string;
    const length = text.length + (text.length % 2);
    setU32(out, at + 4, length);
    for (let i = 0; i < text.length; i++) out[at + 8 + i] = text.charCodeAt(i);
    if (length > text.length) out[at + 8 + text.length] = vr === "UI" ? 0 : 0x20;
    at += 8 + length;
  }
  return out;
}

function setU32(out: Uint8Array, at: number, v: number): void {
  out[at] = v & 0xff;
  out[at + 1] = (v >> 8) & 0xff;
  out[at + 2] = (v >> 16) & 0xff;
  out[at + 3] = (v >>> 24) & 0xff;
}
