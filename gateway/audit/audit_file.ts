/**
 * The audit trail's JSON Lines file: records appended in batches, chained by SHA-256
 * (chain.ts), rotated by size into `<file>.<UTC time>` siblings. The chain is picked up where
 * the file (or its newest rotated sibling) ends, so restarts and rotations do not break it; a
 * line torn by a crash mid-write is cut off at open, and a failed write is rolled back, so no
 * half-written record stays in the file.
 */
import { basename, dirname, join } from "node:path";
import type { Logger } from "../../shared/mod.ts";
import { type ChainTip, EMPTY_CHAIN, lineHash, MAX_LINE_BYTES } from "./chain.ts";
import type { AuditEntry } from "./entry.ts";

/** Settings of the file sink. */
export interface AuditFileOptions {
  path: string;
  maxFileBytes: number;
  /** Rotated files kept; 0 keeps every one. */
  keepFiles: number;
  logger: Logger;
}

const ENCODER = new TextEncoder();
/** `<file>.` + a UTC time such as `20261125T193000.123Z` (+ `-N` when two fall in one ms). */
const ROTATED = /^\d{8}T\d{6}\.\d{3}Z(-\d+)?$/;

/** A rotated sibling's suffix for `date`: sorts as time does. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, "");
}

/** The rotated siblings of `path`, oldest first. */
async function rotatedFiles(path: string): Promise<string[]> {
  const prefix = basename(path) + ".";
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dirname(path))) {
      if (e.isFile && e.name.startsWith(prefix) && ROTATED.test(e.name.slice(prefix.length))) {
        names.push(e.name);
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const suffix = (n: string) => n.slice(prefix.length);
  // `-N` sorts after the plain name of the same millisecond.
  names.sort((a, b) => suffix(a).localeCompare(suffix(b)));
  return names.map((n) => join(dirname(path), n));
}

/**
 * Where `file`'s complete records end (`cut`: a torn last line, from a crash mid-write, lies
 * beyond it) and the last complete record's bytes.
 */
async function tailOf(
  file: Deno.FsFile,
): Promise<{ size: number; cut: number; last?: Uint8Array }> {
  const size = (await file.stat()).size;
  if (size === 0) return { size, cut: 0 };
  // Room for a torn line and a whole one before it.
  const window = Math.min(size, 2 * (MAX_LINE_BYTES + 1));
  const bytes = new Uint8Array(window);
  await file.seek(size - window, Deno.SeekMode.Start);
  let read = 0;
  while (read < window) {
    const n = await file.read(bytes.subarray(read));
    if (n === null) break;
    read += n;
  }
  let end = window;
  let cut = size;
  if (bytes[window - 1] !== 0x0a) {
    const newline = bytes.lastIndexOf(0x0a);
    if (newline < 0) {
      if (window === size) return { size, cut: 0 };
      throw new Error(`the last line of ${size} bytes is longer than ${MAX_LINE_BYTES} bytes`);
    }
    cut = size - window + newline + 1;
    end = newline + 1;
  }
  // bytes[end - 1] is the newline that ends the last complete record.
  const before = end >= 2 ? bytes.lastIndexOf(0x0a, end - 2) : -1;
  if (before < 0 && window < size) {
    throw new Error(`the last record is longer than ${MAX_LINE_BYTES} bytes`);
  }
  return { size, cut, last: bytes.subarray(before + 1, end - 1) };
}

/** The chain tip after `line` (a record's bytes). */
function tipAfter(line: Uint8Array, file: string, logger: Logger): ChainTip {
  try {
    const record = JSON.parse(new TextDecoder().decode(line));
    if (typeof record.seq === "number") return { seq: record.seq, hash: lineHash(line) };
  } catch {
    // reported below
  }
  logger.error(
    "audit: the last line of the trail is not an audit record; the chain goes on from it",
    {
      file,
    },
  );
  return { seq: 0, hash: lineHash(line) };
}

/** The open audit file. */
export class AuditFile {
  readonly path: string;
  #options: AuditFileOptions;
  #file: Deno.FsFile;
  #size: number;
  #tip: ChainTip;

  private constructor(options: AuditFileOptions, file: Deno.FsFile, size: number, tip: ChainTip) {
    this.path = options.path;
    this.#options = options;
    this.#file = file;
    this.#size = size;
    this.#tip = tip;
  }

  /** Opens (creating it and its directory) `options.path` and finds where its chain ends. */
  static async open(options: AuditFileOptions): Promise<AuditFile> {
    await Deno.mkdir(dirname(options.path), { recursive: true, mode: 0o700 });
    const file = await Deno.open(options.path, {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    try {
      const tail = await tailOf(file);
      if (tail.cut < tail.size) {
        await file.truncate(tail.cut);
        options.logger.warn("audit: cut a record torn by a crash off the end of the trail", {
          file: options.path,
          bytes: tail.size - tail.cut,
        });
      }
      let tip = EMPTY_CHAIN;
      if (tail.last) {
        tip = tipAfter(tail.last, options.path, options.logger);
      } else {
        const rotated = (await rotatedFiles(options.path)).at(-1);
        if (rotated) {
          using previous = await Deno.open(rotated, { read: true });
          const last = (await tailOf(previous)).last;
          if (last) tip = tipAfter(last, rotated, options.logger);
        }
      }
      await file.seek(0, Deno.SeekMode.End);
      return new AuditFile(options, file, tail.cut, tip);
    } catch (err) {
      file.close();
      throw err;
    }
  }

  /** The last record written: what the next one chains to. */
  get tip(): ChainTip {
    return this.#tip;
  }

  /** Changes the rotation settings (a reload with the same file). */
  retune(maxFileBytes: number, keepFiles: number): void {
    this.#options = { ...this.#options, maxFileBytes, keepFiles };
  }

  /**
   * Appends `entries` as chained lines, rotating when the file would pass `maxFileBytes`; with
   * `sync`, fdatasync'ed before it resolves. A failed write (or fdatasync) is cut back off the
   * file and thrown; the chain stays at the last line written. (Lines before a rotation are in the
   * rotated file, synced, even when the rest then fails.)
   */
  async append(entries: readonly AuditEntry[], sync = false): Promise<void> {
    let tip = this.#tip;
    let batch: Uint8Array[] = [];
    let batchBytes = 0;
    for (const entry of entries) {
      const line = ENCODER.encode(
        JSON.stringify({ seq: tip.seq + 1, ...entry, prev: tip.hash }),
      );
      const lineBytes = line.length + 1;
      if (
        this.#size + batchBytes > 0 &&
        this.#size + batchBytes + lineBytes > this.#options.maxFileBytes
      ) {
        await this.#write(batch, batchBytes, tip, false);
        batch = [];
        batchBytes = 0;
        await this.#rotate();
      }
      batch.push(line);
      batchBytes += lineBytes;
      tip = { seq: tip.seq + 1, hash: lineHash(line) };
    }
    if (batch.length) await this.#write(batch, batchBytes, tip, sync);
  }

  async #write(lines: Uint8Array[], bytes: number, tip: ChainTip, sync: boolean): Promise<void> {
    const out = new Uint8Array(bytes);
    let at = 0;
    for (const line of lines) {
      out.set(line, at);
      out[at + line.length] = 0x0a;
      at += line.length + 1;
    }
    const before = this.#size;
    try {
      let written = 0;
      while (written < out.length) written += await this.#file.write(out.subarray(written));
      if (sync) await this.#file.syncData();
    } catch (err) {
      // Nothing half-written stays: the file goes back to its last complete record.
      await this.#file.truncate(before).catch(() => {});
      await this.#file.seek(before, Deno.SeekMode.Start).catch(() => {});
      throw err;
    }
    this.#size = before + bytes;
    this.#tip = tip;
  }

  /** Renames the file to its rotated name, starts a new one, deletes rotated files over keep. */
  async #rotate(): Promise<void> {
    await this.#file.syncData();
    this.#file.close();
    let target = `${this.path}.${stamp(new Date())}`;
    for (let n = 1; await exists(target); n++) target = `${this.path}.${stamp(new Date())}-${n}`;
    await Deno.rename(this.path, target);
    this.#file = await Deno.open(this.path, {
      write: true,
      create: true,
      append: true,
      mode: 0o600,
    });
    this.#size = 0;
    if (this.#options.keepFiles > 0) {
      const rotated = await rotatedFiles(this.path);
      for (const old of rotated.slice(0, Math.max(0, rotated.length - this.#options.keepFiles))) {
        await Deno.remove(old).catch((err) =>
          this.#options.logger.warn("audit: an old rotated file could not be deleted", {
            file: old,
            error: (err as Error).message,
          })
        );
      }
    }
  }

  /** Flushes to disk and closes. */
  async close(): Promise<void> {
    try {
      await this.#file.syncData();
    } finally {
      this.#file.close();
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
