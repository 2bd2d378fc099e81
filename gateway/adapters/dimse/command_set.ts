/**
 * DIMSE command sets (group 0000, always Implicit VR Little Endian, PS3.7 E.1) to and from the
 * naturalized element maps dcmjs-dimse's commands hold (`{ CommandField: 1, MessageID: 7, ... }`),
 * without dcmjs's general dataset reader and writer. Only the command elements of PS3.7 are known;
 * a command with anything else is left to dcmjs (the functions answer undefined).
 */

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

/** A text value without its padding (trailing NUL or spaces, leading spaces). */
function text(bytes: Uint8Array): string {
  // Command values are short (UIDs, AE titles): no TextDecoder call (an op) for them.
  let raw = "";
  if (bytes.byteLength > 64) raw = LATIN1.decode(bytes);
  else for (let i = 0; i < bytes.byteLength; i++) raw += String.fromCharCode(bytes[i]);
  return raw.replace(/[\0 ]+$/, "").replace(/^ +/, "");
}

/**
 * Naturalized elements of an encoded command set, as dcmjs reads them; undefined when it holds an
 * element this module does not know or is truncated.
 */
export function decodeCommand(bytes: Uint8Array): Record<string, unknown> | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, unknown> = {};
  let at = 0;
  while (at + 8 <= bytes.byteLength) {
    if (view.getUint16(at, true) !== 0x0000) return undefined;
    const known = BY_ELEMENT.get(view.getUint16(at + 2, true));
    const length = view.getUint32(at + 4, true);
    at += 8;
    if (!known || at + length > bytes.byteLength) return undefined;
    if (known.name !== "CommandGroupLength") {
      const value = decodeValue(known.vr, view, at, length, bytes);
      if (value === undefined) return undefined;
      out[known.name] = value;
    }
    at += length;
  }
  return at === bytes.byteLength ? out : undefined;
}

function decodeValue(
  vr: CommandVr,
  view: DataView,
  at: number,
  length: number,
  bytes: Uint8Array,
): unknown {
  switch (vr) {
    case "US":
      return length === 2 ? view.getUint16(at, true) : undefined;
    case "UL":
      return length === 4 ? view.getUint32(at, true) : undefined;
    case "AT": {
      // dcmjs keeps attribute tags as numbers (group << 16 | element).
      if (length % 4 !== 0) return undefined;
      const tags: number[] = [];
      for (let i = 0; i < length; i += 4) {
        tags.push(view.getUint16(at + i, true) * 0x10000 + view.getUint16(at + i + 2, true));
      }
      return tags.length === 1 ? tags[0] : tags;
    }
    default:
      return text(bytes.subarray(at, at + length));
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

/**
 * A command set's bytes (group length first, elements in tag order), or undefined when an element
 * is not one this module encodes (dcmjs then writes it). Elements without a value are left out.
 * Written in one pass over the known elements (no intermediate arrays: three command sets go out
 * per C-FIND through the gateway).
 */
export function encodeCommand(elements: Record<string, unknown>): Uint8Array | undefined {
  let groupLength = 0;
  for (const name in elements) {
    const value = elements[name];
    if (value === undefined || value === null) continue;
    const known = BY_NAME.get(name);
    if (!known || known.element === 0x0000) return undefined;
    const n = valueLength(known.vr, value);
    if (n < 0) return undefined;
    groupLength += 8 + n;
  }
  const out = new Uint8Array(12 + groupLength);
  const view = new DataView(out.buffer);
  view.setUint32(4, 4, true);
  view.setUint32(8, groupLength, true);
  let at = 12;
  for (const [element, name, vr] of ELEMENTS) {
    const value = elements[name];
    if (element === 0x0000 || value === undefined || value === null) continue;
    view.setUint16(at + 2, element, true);
    if (vr === "US") {
      view.setUint32(at + 4, 2, true);
      view.setUint16(at + 8, Number(value), true);
      at += 10;
      continue;
    }
    const text = value as string;
    const length = text.length + (text.length % 2);
    view.setUint32(at + 4, length, true);
    for (let i = 0; i < text.length; i++) out[at + 8 + i] = text.charCodeAt(i);
    if (length > text.length) out[at + 8 + text.length] = vr === "UI" ? 0 : 0x20;
    at += 8 + length;
  }
  return out;
}
