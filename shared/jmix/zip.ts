/**
 * Bounded zip reading and plain zip writing for JMIX packages. Reading checks the entry count,
 * every entry name, the declared and the actual uncompressed sizes (inflated chunk by chunk, so a
 * zip bomb is stopped as soon as it passes the bound) and each entry's CRC-32.
 */
import { Inflate, zipSync } from "fflate";

/** Limits of one zip read. */
export interface ZipLimits {
  /** Most entries (files and directories) accepted. */
  maxEntries: number;
  /** Most bytes all entries may inflate to, together. */
  maxUncompressedBytes: number;
}

/** Why a zip was refused: `not_zip` (no zip structure) or `invalid` (unsafe or corrupt). */
export class ZipError extends Error {
  readonly kind: "not_zip" | "invalid" | "too_large";
  constructor(kind: "not_zip" | "invalid" | "too_large", message: string) {
    super(message);
    this.name = "ZipError";
    this.kind = kind;
  }
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const DECODER = new TextDecoder("utf-8", { fatal: true });

/** True when the bytes start like a zip file (a local header or an empty archive). */
export function looksLikeZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b &&
    ((bytes[2] === 3 && bytes[3] === 4) || (bytes[2] === 5 && bytes[3] === 6));
}

/** The problem with an entry name, or undefined when it is a safe relative path. */
export function entryNameProblem(name: string): string | undefined {
  if (name === "") return "an entry has an empty name";
  if (name.includes("\\")) return `entry "${name}" contains a backslash`;
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(name)) return `entry "${name}" contains a control character`;
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) return `entry "${name}" is absolute`;
  const segments = name.replace(/\/$/, "").split("/");
  if (segments.some((s) => s === ".." || s === ".")) {
    return `entry "${name}" has a \`.\` or \`..\` segment`;
  }
  if (segments.some((s) => s === "")) return `entry "${name}" has an empty segment`;
  return undefined;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE) continued from `crc` over `bytes`. */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

interface CentralEntry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

function findEocd(view: DataView): number {
  const min = Math.max(0, view.byteLength - 22 - 0xffff);
  for (let i = view.byteLength - 22; i >= min; i--) {
    if (view.getUint32(i, true) === EOCD) return i;
  }
  throw new ZipError("not_zip", "no zip end-of-central-directory record");
}

function centralEntries(bytes: Uint8Array, limits: ZipLimits): CentralEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const eocd = findEocd(view);
  const count = view.getUint16(eocd + 10, true);
  const cdSize = view.getUint32(eocd + 12, true);
  const cdOffset = view.getUint32(eocd + 16, true);
  if (count === 0xffff || cdOffset === 0xffffffff) {
    throw new ZipError("invalid", "zip64 archives are not accepted");
  }
  if (count > limits.maxEntries) {
    throw new ZipError("invalid", `zip has ${count} entries; at most ${limits.maxEntries} allowed`);
  }
  if (cdOffset + cdSize > eocd) throw new ZipError("invalid", "zip central directory is corrupt");
  const out: CentralEntry[] = [];
  let at = cdOffset;
  let declared = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > eocd || view.getUint32(at, true) !== CENTRAL) {
      throw new ZipError("invalid", "zip central directory is corrupt");
    }
    const nameLength = view.getUint16(at + 28, true);
    const extra = view.getUint16(at + 30, true);
    const comment = view.getUint16(at + 32, true);
    let name: string;
    try {
      name = DECODER.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    } catch {
      throw new ZipError("invalid", "an entry name is not UTF-8");
    }
    const problem = entryNameProblem(name);
    if (problem) throw new ZipError("invalid", problem);
    const entry: CentralEntry = {
      name,
      flags: view.getUint16(at + 8, true),
      method: view.getUint16(at + 10, true),
      crc: view.getUint32(at + 16, true),
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
      localOffset: view.getUint32(at + 42, true),
    };
    if (entry.flags & 1) throw new ZipError("invalid", `entry "${name}" is encrypted`);
    if (entry.method !== 0 && entry.method !== 8) {
      throw new ZipError("invalid", `entry "${name}" uses compression method ${entry.method}`);
    }
    declared += entry.size;
    if (declared > limits.maxUncompressedBytes) {
      throw new ZipError(
        "too_large",
        `zip declares more than ${limits.maxUncompressedBytes} uncompressed bytes`,
      );
    }
    out.push(entry);
    at += 46 + nameLength + extra + comment;
  }
  const names = new Set<string>();
  for (const e of out) {
    if (names.has(e.name)) throw new ZipError("invalid", `entry "${e.name}" appears twice`);
    names.add(e.name);
  }
  return out;
}

/** Inflate raw deflate data, failing as soon as the output passes `max` bytes. */
function inflateBounded(data: Uint8Array, max: number, name: string): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const inflater = new Inflate((chunk) => {
    total += chunk.length;
    if (total > max) {
      throw new ZipError("invalid", `entry "${name}" inflates beyond its declared size`);
    }
    chunks.push(chunk.slice());
  });
  try {
    // Feed in slices so that a bomb is stopped after little output.
    const STEP = 16384;
    for (let i = 0; i < data.length; i += STEP) {
      inflater.push(data.subarray(i, Math.min(i + STEP, data.length)), i + STEP >= data.length);
    }
    if (data.length === 0) inflater.push(new Uint8Array(0), true);
  } catch (err) {
    if (err instanceof ZipError) throw err;
    throw new ZipError("invalid", `entry "${name}" is corrupt: ${(err as Error).message}`);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Read every file entry of a zip (directories skipped) within `limits`; throws ZipError. */
export function readZip(bytes: Uint8Array, limits: ZipLimits): Map<string, Uint8Array> {
  if (!looksLikeZip(bytes)) throw new ZipError("not_zip", "the body is not a zip file");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const files = new Map<string, Uint8Array>();
  for (const e of centralEntries(bytes, limits)) {
    if (e.name.endsWith("/")) continue;
    const at = e.localOffset;
    if (at + 30 > bytes.length || view.getUint32(at, true) !== LOCAL) {
      throw new ZipError("invalid", `entry "${e.name}" has no local header`);
    }
    const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
    const end = start + e.compressedSize;
    if (end > bytes.length) throw new ZipError("invalid", `entry "${e.name}" is truncated`);
    const raw = bytes.subarray(start, end);
    const data = e.method === 0 ? raw : inflateBounded(raw, e.size, e.name);
    if (data.length !== e.size) {
      throw new ZipError("invalid", `entry "${e.name}" is not of its declared size`);
    }
    if (crc32(data) !== e.crc) throw new ZipError("invalid", `entry "${e.name}" fails its CRC`);
    files.set(e.name, data);
  }
  return files;
}

/** A zip of `files` (path -> bytes); DICOM and already-compressed data are deflated too. */
export function writeZip(files: Map<string, Uint8Array>): Uint8Array {
  const input: Record<string, Uint8Array> = {};
  for (const [name, data] of [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    input[name] = data;
  }
  return zipSync(input, { level: 6, mtime: new Date("2000-01-01T00:00:00Z") });
}
