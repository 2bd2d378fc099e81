/**
 * A streaming reader of tar archives (POSIX ustar, with pax `x` headers and GNU `L` long names)
 * that copies one regular file out: the gateway binary of a release archive. No entry is written
 * to disk by name, so `../` paths in an archive can do no harm.
 */

const BLOCK = 512;

/** Reads exact byte counts from a stream. */
class ByteReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #buffer: Uint8Array = new Uint8Array(0);

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** Up to `max` bytes (at least one), or null at the end. */
  async some(max: number): Promise<Uint8Array | null> {
    if (this.#buffer.byteLength === 0) {
      const { value, done } = await this.#reader.read();
      if (done) return null;
      this.#buffer = value;
    }
    const n = Math.min(max, this.#buffer.byteLength);
    const out = this.#buffer.subarray(0, n);
    this.#buffer = this.#buffer.subarray(n);
    return out;
  }

  /** Exactly `n` bytes; null when the stream ends first (at the very start only). */
  async exact(n: number): Promise<Uint8Array | null> {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = await this.some(n - filled);
      if (!chunk) {
        if (filled === 0) return null;
        throw new Error("truncated tar archive");
      }
      out.set(chunk, filled);
      filled += chunk.byteLength;
    }
    return out;
  }

  /** Passes `n` bytes to `sink` (or drops them). */
  async copy(n: number, sink?: (chunk: Uint8Array) => Promise<void>): Promise<void> {
    let left = n;
    while (left > 0) {
      const chunk = await this.some(Math.min(left, 1 << 16));
      if (!chunk) throw new Error("truncated tar archive");
      if (sink) await sink(chunk);
      left -= chunk.byteLength;
    }
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

function text(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(end === -1 ? bytes : bytes.subarray(0, end));
}

/** An octal (or GNU base-256) number field. */
function number(bytes: Uint8Array): number {
  if (bytes[0] & 0x80) {
    let value = bytes[0] & 0x7f;
    for (let i = 1; i < bytes.byteLength; i++) value = value * 256 + bytes[i];
    return value;
  }
  const s = text(bytes).trim();
  return s === "" ? 0 : parseInt(s, 8);
}

function checksumOk(header: Uint8Array): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i];
  return sum === number(header.subarray(148, 156));
}

/** The `path` of pax extended header records (`<len> path=<value>\n`). */
function paxPath(data: Uint8Array): string | undefined {
  const records = new TextDecoder().decode(data);
  let path: string | undefined;
  let i = 0;
  while (i < records.length) {
    const space = records.indexOf(" ", i);
    if (space === -1) break;
    const len = parseInt(records.slice(i, space), 10);
    if (!Number.isFinite(len) || len <= 0) break;
    const record = records.slice(space + 1, i + len - 1);
    const eq = record.indexOf("=");
    if (record.slice(0, eq) === "path") path = record.slice(eq + 1);
    i += len;
  }
  return path;
}

/** An entry found in an archive. */
export interface TarEntry {
  name: string;
  size: number;
  mode: number;
}

/**
 * Reads `stream` until the first regular file for which `wanted(name)` is true and copies its
 * bytes to `sink`; resolves with the entry, or null when the archive has none.
 */
export async function extractTarEntry(
  stream: ReadableStream<Uint8Array>,
  wanted: (name: string) => boolean,
  sink: (chunk: Uint8Array) => Promise<void>,
): Promise<TarEntry | null> {
  const reader = new ByteReader(stream);
  let longName: string | undefined;
  try {
    for (;;) {
      const header = await reader.exact(BLOCK);
      if (!header || header.every((b) => b === 0)) return null;
      if (!checksumOk(header)) throw new Error("corrupt tar archive (header checksum)");
      const size = number(header.subarray(124, 136));
      const type = String.fromCharCode(header[156] || 0x30);
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (type === "x" || type === "L") {
        const data = (await reader.exact(padded)) ?? new Uint8Array(0);
        longName = type === "x"
          ? paxPath(data.subarray(0, size)) ?? longName
          : text(data.subarray(0, size));
        continue;
      }
      const prefix = text(header.subarray(345, 500));
      const name = longName ??
        (prefix ? `${prefix}/${text(header.subarray(0, 100))}` : text(header.subarray(0, 100)));
      longName = undefined;
      if ((type === "0" || type === "7") && wanted(name)) {
        await reader.copy(size, sink);
        return { name, size, mode: number(header.subarray(100, 108)) };
      }
      await reader.copy(padded);
    }
  } finally {
    await reader.cancel();
  }
}
