/**
 * DICOM JSON of received dataset bytes, decoded when something first looks at it. Until then the
 * object still stands for its bytes exactly, so a match the pipeline passes on untouched goes to
 * the DIMSE caller as it was received (no decode, no re-encode: byte-identical, and about 3 µs
 * less per match). Any look at all (a key read, listed, tested, set, deleted; JSON.stringify,
 * spread) decodes it into an ordinary object behind the proxy and ends that: whatever is done to
 * it afterwards, even in place inside an element, is encoded again from the JSON.
 */
import {
  type DicomJson,
  type DicomJsonElement,
  readDataset,
  toDicomJson,
} from "../../dicom/mod.ts";
import { decodeElement, decodeIdentifier } from "./identifier_codec.ts";

/** The key under which a lazy object answers its state without being decoded. */
const STATE = Symbol("lazy DICOM JSON");

/** A lazy object's bytes and whether anything has looked at it. */
class LazyState implements ProxyHandler<DicomJson> {
  readonly bytes: Uint8Array;
  readonly ts: string;
  touched = false;
  /** The last element peeked (peekElement), by tag: the endpoint and the backend read the same. */
  peekedTag = -1;
  peeked: DicomJsonElement | null | undefined;

  constructor(bytes: Uint8Array, ts: string) {
    this.bytes = bytes;
    this.ts = ts;
  }

  /** Decodes into `target` on the first look. */
  #open(target: DicomJson): DicomJson {
    if (this.touched) return target;
    this.touched = true;
    const ts = this.ts;
    Object.assign(
      target,
      decodeIdentifier(this.bytes, ts) ?? toDicomJson(readDataset(this.bytes, ts)),
    );
    return target;
  }

  get(target: DicomJson, key: PropertyKey, receiver: unknown): unknown {
    if (key === STATE) return this;
    // Decoded keys are tags (8 characters): any other (`then` when a promise resolves with it,
    // `toJSON`, symbols) is what the empty object answers, decoded or not. Not a look.
    if (!this.touched && (typeof key !== "string" || key.length !== 8)) {
      return Reflect.get(target, key, receiver);
    }
    return Reflect.get(this.#open(target), key, receiver);
  }
  set(target: DicomJson, key: PropertyKey, value: unknown, receiver: unknown): boolean {
    return Reflect.set(this.#open(target), key, value, receiver);
  }
  has(target: DicomJson, key: PropertyKey): boolean {
    return Reflect.has(this.#open(target), key);
  }
  deleteProperty(target: DicomJson, key: PropertyKey): boolean {
    return Reflect.deleteProperty(this.#open(target), key);
  }
  ownKeys(target: DicomJson): (string | symbol)[] {
    return Reflect.ownKeys(this.#open(target));
  }
  getOwnPropertyDescriptor(target: DicomJson, key: PropertyKey): PropertyDescriptor | undefined {
    return Reflect.getOwnPropertyDescriptor(this.#open(target), key);
  }
  defineProperty(target: DicomJson, key: PropertyKey, desc: PropertyDescriptor): boolean {
    return Reflect.defineProperty(this.#open(target), key, desc);
  }
  preventExtensions(target: DicomJson): boolean {
    return Reflect.preventExtensions(this.#open(target));
  }
}

/** DICOM JSON of `bytes` (a dataset in transfer syntax `ts`), decoded on first look. */
export function lazyDicomJson(bytes: Uint8Array, ts: string): DicomJson {
  return new Proxy({} as DicomJson, new LazyState(bytes, ts));
}

/**
 * The bytes a lazy object was made of, when nothing has looked at it yet (it is then exactly
 * them); undefined for any other object. Does not count as a look.
 */
export function untouched(json: DicomJson): { bytes: Uint8Array; ts: string } | undefined {
  const state = (json as { [STATE]?: LazyState })[STATE];
  return state instanceof LazyState && !state.touched ? state : undefined;
}

/**
 * Element `key` of `json` (DICOM JSON key of top-level tag `tag`) for reading only: of an
 * untouched lazy object, a copy decoded from its bytes without a look at the object (it stays its
 * bytes; the same copy for the same tag again); of any other object (or when the bytes cannot
 * tell), `json[key]` itself.
 */
export function peekElement(
  json: DicomJson,
  tag: number,
  key: string,
): DicomJsonElement | undefined {
  const state = (json as { [STATE]?: LazyState })[STATE];
  if (state instanceof LazyState && !state.touched) {
    if (state.peekedTag !== tag) {
      state.peeked = decodeElement(state.bytes, state.ts, tag);
      state.peekedTag = tag;
    }
    if (state.peeked !== undefined) return state.peeked ?? undefined;
  }
  return json[key];
}

/**
 * Whether untouched dataset bytes in an uncompressed Little Endian syntax hold top-level element
 * `tag`: true, false, or undefined when the walk cannot tell (an element of undefined length
 * before it). Elements are in tag order, so the walk stops at the first one past `tag`.
 */
export function holdsElement(bytes: Uint8Array, ts: string, tag: number): boolean | undefined {
  const explicit = ts !== IMPLICIT_LE;
  const size = bytes.byteLength;
  let at = 0;
  while (at + 8 <= size) {
    const n = (u16(bytes, at) * 0x10000 + u16(bytes, at + 2)) >>> 0;
    if (n === tag) return true;
    if (n > tag) return false;
    let length: number;
    if (explicit && !longVr(bytes[at + 4], bytes[at + 5])) {
      length = u16(bytes, at + 6);
      at += 8;
    } else if (explicit) {
      if (at + 12 > size) return undefined;
      length = u32(bytes, at + 8);
      at += 12;
    } else {
      length = u32(bytes, at + 4);
      at += 8;
    }
    if (length === 0xffffffff) return undefined;
    at += length;
  }
  return at === size ? false : undefined;
}

function u16(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

/** Whether explicit VR `a b` has a 32-bit length (OB OD OF OL OV OW SQ UC UN UR UT). */
function longVr(a: number, b: number): boolean {
  switch (a) {
    case 0x4f: // O
      return b === 0x42 || b === 0x44 || b === 0x46 || b === 0x4c || b === 0x56 || b === 0x57;
    case 0x53: // S
      return b === 0x51;
    case 0x55: // U
      return b === 0x43 || b === 0x4e || b === 0x52 || b === 0x54;
    default:
      return false;
  }
}

const IMPLICIT_LE = "1.2.840.10008.1.2";
