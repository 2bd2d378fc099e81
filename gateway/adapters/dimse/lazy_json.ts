/**
 * DICOM JSON of received dataset bytes, decoded when something first looks at it. Until then the
 * object still stands for its bytes exactly, so a match the pipeline passes on untouched goes to
 * the DIMSE caller as it was received (no decode, no re-encode: byte-identical, and about 3 µs
 * less per match). Any look at all (a key read, listed, tested, set, deleted; JSON.stringify,
 * spread) decodes it into an ordinary object behind the proxy and ends that: whatever is done to
 * it afterwards, even in place inside an element, is encoded again from the JSON.
 */
import { type DicomJson, readDataset, toDicomJson } from "../../dicom/mod.ts";
import { decodeIdentifier } from "./identifier_codec.ts";

/** The key under which a lazy object answers its state without being decoded. */
const STATE = Symbol("lazy DICOM JSON");

/** A lazy object's bytes and whether anything has looked at it. */
class LazyState implements ProxyHandler<DicomJson> {
  readonly bytes: Uint8Array;
  readonly ts: string;
  touched = false;

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
 * Whether untouched dataset bytes in an uncompressed Little Endian syntax hold top-level element
 * `tag`: true, false, or undefined when the walk cannot tell (an element of undefined length
 * before it). Elements are in tag order, so the walk stops at the first one past `tag`.
 */
export function holdsElement(bytes: Uint8Array, ts: string, tag: number): boolean | undefined {
  const explicit = ts !== IMPLICIT_LE;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at + 8 <= bytes.byteLength) {
    const n = (view.getUint16(at, true) * 0x10000 + view.getUint16(at + 2, true)) >>> 0;
    if (n === tag) return true;
    if (n > tag) return false;
    let length: number;
    if (explicit) {
      const vr = String.fromCharCode(bytes[at + 4], bytes[at + 5]);
      if (LONG_VRS.has(vr)) {
        if (at + 12 > bytes.byteLength) return undefined;
        length = view.getUint32(at + 8, true);
        at += 12;
      } else {
        length = view.getUint16(at + 6, true);
        at += 8;
      }
    } else {
      length = view.getUint32(at + 4, true);
      at += 8;
    }
    if (length === 0xffffffff) return undefined;
    at += length;
  }
  return at === bytes.byteLength ? false : undefined;
}

const IMPLICIT_LE = "1.2.840.10008.1.2";
/** VRs whose explicit-VR length field is 32 bits. */
const LONG_VRS = new Set(["OB", "OD", "OF", "OL", "OV", "OW", "SQ", "UC", "UN", "UR", "UT"]);
