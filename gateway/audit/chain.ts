/**
 * The hash chain of the audit files. Every line is a JSON object whose `prev` is the SHA-256 (hex)
 * of the bytes of the line before it (without its newline), and whose `seq` is one more than the
 * line before's; the first record ever has `seq` 1 and `prev` {@link GENESIS}. The chain runs on
 * across rotated files, so changing, removing, inserting or reordering a line anywhere breaks it
 * at the next line. (Cutting lines off the end of the newest file leaves a shorter valid chain:
 * ship records elsewhere too, e.g. as FHIR AuditEvents, when that matters.)
 */
import { createHash } from "node:crypto";
import { MARKER_SUFFIX, parseMarker } from "./run_marker.ts";

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

/** A place where the chain itself says records are missing (`audit.gap`, `audit.dropped`). */
export interface ChainGap {
  /** `seq` of the record that notes the gap: the missing records would have come before it. */
  seq: number;
  event: "audit.gap" | "audit.dropped";
  /** When the gap was noted. */
  time?: string;
  /** `audit.gap`: the stopped run's durability, last record and when it stopped, at the latest. */
  durability?: string;
  lastSeq?: number;
  stoppedAfter?: string;
  /** `audit.dropped`: how many records, and why. */
  dropped?: number;
  reason?: string;
}

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
  /** The gaps the chain records, in order. */
  gaps: ChainGap[];
}

/** Reads `file` line by line, checking each record against the one before it. */
export async function readChain(file: string): Promise<FileChain> {
  const result: FileChain = { file, records: 0, gaps: [] };
  using handle = await Deno.open(file, { read: true });
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  let tip: ChainTip | undefined;
  const check = (line: Uint8Array): string | undefined => {
    lineNo++;
    let record: { seq?: unknown; prev?: unknown; event?: unknown } & Record<string, unknown>;
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
    if (record.event === "audit.gap" || record.event === "audit.dropped") {
      result.gaps.push(gapOf(record.seq, record));
    }
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

/** The gap a chained `audit.gap` or `audit.dropped` record notes. */
function gapOf(seq: number, r: Record<string, unknown>): ChainGap {
  const text = (v: unknown) => typeof v === "string" ? v : undefined;
  const num = (v: unknown) => typeof v === "number" ? v : undefined;
  return {
    seq,
    event: r.event as ChainGap["event"],
    time: text(r.time),
    durability: text(r.durability),
    lastSeq: num(r.last_seq),
    stoppedAfter: text(r.stopped_after),
    dropped: num(r.dropped),
    reason: text(r.reason),
  };
}

/** How `gateway audit verify` words a gap. */
export function describeGap(g: ChainGap): string {
  if (g.event === "audit.dropped") {
    return `seq ${g.seq}: ${g.dropped ?? "some"} records lost before it (${g.reason ?? "?"}, ` +
      `noted ${g.time ?? "at an unknown time"})`;
  }
  const when = `stopped after ${g.stoppedAfter ?? "an unknown time"}, restarted ${g.time ?? "?"}`;
  return `seq ${g.seq}: the gateway did not stop cleanly after seq ${
    g.lastSeq ?? "?"
  } (${when}); ` +
    (g.durability === "sync"
      ? "durability sync: no answered request is missing, requests in flight had no answer"
      : "durability batched: records of requests answered shortly before may be missing");
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
  /** True when the chain is unbroken (recorded gaps do not break it). */
  ok: boolean;
  /** One line per file, per break between files and per recorded gap, in chain order. */
  lines: string[];
  /** Gaps the chain records (`audit.gap`, `audit.dropped`): records are missing there, said so. */
  gaps: number;
}

/**
 * Checks the chain of every file and between them. Files may be given in any order: they are
 * put in the order of their first `seq`. A set that does not begin at `seq` 1 is reported (older
 * files were not given, or were deleted by `keep_files`) but is not a break; nor are the gaps the
 * chain records itself (`audit.gap`, `audit.dropped`), which are listed and counted. A run marker
 * among the files (`<file>.open`) is reported, not read as a chain.
 */
export async function verifyAuditFiles(files: string[]): Promise<VerifyReport> {
  const chains: FileChain[] = [];
  const lines: string[] = [];
  let ok = true;
  let gaps = 0;
  for (const file of files) {
    // A run marker (`audit.jsonl*` takes it along) says a gateway has the trail open, or died.
    if (file.endsWith(MARKER_SUFFIX)) {
      const marker = await Deno.readTextFile(file).then(parseMarker, () => undefined);
      if (marker) {
        lines.push(
          `${file}: a gateway (pid ${marker.pid || "?"}, started ${marker.started || "?"}) is ` +
            "writing this trail, or stopped uncleanly and has not started again; its records " +
            "may not all be in the files yet",
        );
        continue;
      }
    }
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
          "chain intact" + (chain.gaps.length ? `, ${chain.gaps.length} recorded gap(s):` : ""),
      );
    }
    for (const gap of chain.gaps) lines.push(`  gap at ${describeGap(gap)}`);
    gaps += chain.gaps.length;
    before = chain;
  }
  return { ok, lines, gaps };
}
