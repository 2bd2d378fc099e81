/**
 * The hash chain of the audit files. Every line is a JSON object whose `prev` is the SHA-256 (hex)
 * of the bytes of the line before it (without its newline), and whose `seq` is one more than the
 * line before's; the first record ever has `seq` 1 and `prev` {@link GENESIS}. The chain runs on
 * across rotated files, so changing, removing, inserting or reordering a line anywhere breaks it
 * at the next line. (Cutting lines off the end of the newest file leaves a shorter valid chain:
 * ship records elsewhere too, e.g. as FHIR AuditEvents, when that matters.)
 */
import { createHash } from "node:crypto";

/** `prev` of the first record. */
export const GENESIS = "0".repeat(64);

/** Longest line accepted when reading a trail back. */
export const MAX_LINE_BYTES = 1024 * 1024;

/** SHA-256 of a line's bytes, hex. */
export function lineHash(line: Uint8Array | string): string {
  return createHash("sha256").update(line).digest("hex");
}

/** Where a chain ended: what the next record continues from. */
export interface ChainTip {
  seq: number;
  hash: string;
}

/** The tip before any record. */
export const EMPTY_CHAIN: ChainTip = { seq: 0, hash: GENESIS };

/** One file's chain as read back. */
export interface FileChain {
  file: string;
  records: number;
  /** `seq` and `prev` of the first record (absent for an empty file). */
  first?: { seq: number; prev: string };
  /** The tip after the last record. */
  last?: ChainTip;
  /** The first break found, as `line N: what is wrong`. */
  problem?: string;
}

/** Reads `file` line by line, checking each record against the one before it. */
export async function readChain(file: string): Promise<FileChain> {
  const result: FileChain = { file, records: 0 };
  using handle = await Deno.open(file, { read: true });
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  let tip: ChainTip | undefined;
  const check = (line: Uint8Array): string | undefined => {
    lineNo++;
    let record: { seq?: unknown; prev?: unknown };
    try {
      record = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(line));
    } catch {
      return `line ${lineNo}: not a JSON record`;
    }
    if (typeof record.seq !== "number" || typeof record.prev !== "string") {
      return `line ${lineNo}: the record has no seq or prev`;
    }
    if (!tip) {
      result.first = { seq: record.seq, prev: record.prev };
    } else if (record.prev !== tip.hash) {
      return `line ${lineNo} (seq ${record.seq}): prev is not the SHA-256 of the line before ` +
        "(a line was changed, removed or inserted here)";
    } else if (record.seq !== tip.seq + 1) {
      return `line ${lineNo}: seq ${record.seq} follows seq ${tip.seq}`;
    }
    tip = { seq: record.seq, hash: lineHash(line) };
    result.records++;
    return undefined;
  };
  const buffer = new Uint8Array(64 * 1024);
  while (true) {
    const n = await handle.read(buffer);
    if (n === null) break;
    let start = 0;
    for (let i = 0; i < n; i++) {
      if (buffer[i] !== 0x0a) continue;
      const piece = buffer.subarray(start, i);
      const line = pending.length
        ? concat([...pending, piece], pendingBytes + piece.length)
        : piece;
      pending = [];
      pendingBytes = 0;
      start = i + 1;
      const problem = check(line);
      if (problem) {
        result.problem = problem;
        result.last = tip;
        return result;
      }
    }
    if (start < n) {
      pending.push(buffer.slice(start, n));
      pendingBytes += n - start;
      if (pendingBytes > MAX_LINE_BYTES) {
        result.problem = `line ${lineNo + 1}: longer than ${MAX_LINE_BYTES} bytes`;
        result.last = tip;
        return result;
      }
    }
  }
  if (pendingBytes > 0) {
    result.problem = `line ${lineNo + 1}: incomplete (no newline at the end of the file)`;
  }
  result.last = tip;
  return result;
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The verdict on a set of audit files. */
export interface VerifyReport {
  ok: boolean;
  /** One line per file and per break between files, in chain order. */
  lines: string[];
}

/**
 * Checks the chain of every file and between them. Files may be given in any order: they are
 * put in the order of their first `seq`. A set that does not begin at `seq` 1 is reported (older
 * files were not given, or were deleted by `keep_files`) but is not a break.
 */
export async function verifyAuditFiles(files: string[]): Promise<VerifyReport> {
  const chains: FileChain[] = [];
  const lines: string[] = [];
  let ok = true;
  for (const file of files) {
    try {
      chains.push(await readChain(file));
    } catch (err) {
      lines.push(`${file}: cannot be read: ${(err as Error).message}`);
      ok = false;
    }
  }
  chains.sort((a, b) => (a.first?.seq ?? Infinity) - (b.first?.seq ?? Infinity));
  let before: FileChain | undefined;
  for (const chain of chains) {
    if (!chain.first) {
      lines.push(`${chain.file}: empty`);
      continue;
    }
    if (!before) {
      if (chain.first.seq !== 1 || chain.first.prev !== GENESIS) {
        lines.push(
          `${chain.file}: the chain starts at seq ${chain.first.seq} (earlier files not given)`,
        );
      }
    } else if (before.last && !before.problem) {
      if (chain.first.prev !== before.last.hash || chain.first.seq !== before.last.seq + 1) {
        ok = false;
        lines.push(
          `${chain.file}: does not continue ${before.file} (seq ${before.last.seq} to ` +
            `${chain.first.seq}): a file between them is missing, or one was changed`,
        );
      }
    }
    if (chain.problem) {
      ok = false;
      lines.push(`${chain.file}: BROKEN at ${chain.problem}`);
    } else {
      lines.push(
        `${chain.file}: ${chain.records} records, seq ${chain.first.seq}-${chain.last!.seq}, ` +
          "chain intact",
      );
    }
    before = chain;
  }
  return { ok, lines };
}
