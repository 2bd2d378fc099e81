/**
 * The run marker: `<file>.open` beside the audit file, written when a run of the gateway opens the
 * file and removed when it stops cleanly. A start that finds one knows the run before it ended
 * without its last records written (kill -9, a crash, a power cut), and says so in the chain with
 * an `audit.gap` record, so that an unclean stop is never silent, even with `durability =
 * "batched"`, where the records of the last moments before it are lost.
 */
import type { AuditEntry } from "./entry.ts";

/** What a run writes in its marker. */
export interface RunMarker {
  /** Process id of the run. */
  pid: number;
  /** When the run opened the file (ISO 8601). */
  started: string;
  /** The run's `durability`: what an unclean stop may have cost. */
  durability: "sync" | "batched";
}

/** What a start learns of a run that stopped without removing its marker. */
export interface UncleanStop {
  /** The marker, as far as it could be read (a torn one gives pid 0 and no start). */
  marker: RunMarker;
  /** The audit file's last write by that run: the stop came after it (undefined: no file). */
  lastWrite?: Date;
}

/** Suffix of the marker beside the audit file. */
export const MARKER_SUFFIX = ".open";

/** The marker of the audit file `file`. */
export function markerPath(file: string): string {
  return file + MARKER_SUFFIX;
}

/** Reads a marker's text (a torn or foreign one still counts: its fields are then unknown). */
export function parseMarker(text: string): RunMarker {
  try {
    const m = JSON.parse(text) as Partial<RunMarker>;
    return {
      pid: typeof m.pid === "number" ? m.pid : 0,
      started: typeof m.started === "string" ? m.started : "",
      durability: m.durability === "sync" ? "sync" : "batched",
    };
  } catch {
    // Unknown durability: assume the one that may have lost answered requests.
    return { pid: 0, started: "", durability: "batched" };
  }
}

/**
 * The unclean stop of the run before, when its marker is still beside `file`; read before the
 * file is opened (cutting a torn line would change its modification time).
 */
export async function findUncleanStop(file: string): Promise<UncleanStop | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(markerPath(file));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
  const lastWrite = await Deno.stat(file).then((s) => s.mtime ?? undefined, () => undefined);
  return { marker: parseMarker(text), lastWrite };
}

/** Writes this run's marker (0600; fdatasync'ed, so that it outlives a power cut too). */
export async function writeMarker(file: string, marker: RunMarker): Promise<void> {
  using handle = await Deno.open(markerPath(file), {
    write: true,
    create: true,
    truncate: true,
    mode: 0o600,
  });
  const bytes = new TextEncoder().encode(JSON.stringify(marker) + "\n");
  let written = 0;
  while (written < bytes.length) written += await handle.write(bytes.subarray(written));
  await handle.syncData();
}

/** Removes the marker: the run stopped cleanly, every record it took is in the file. */
export async function removeMarker(file: string): Promise<void> {
  await Deno.remove(markerPath(file)).catch((err) => {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  });
}

/**
 * The `audit.gap` record of `stop`, chained after the record `lastSeq`: the stopped run, its
 * durability, and the time of the stop as far as it is known (after `stopped_after`, before this
 * record's `time`).
 */
export function gapEntry(stop: UncleanStop, lastSeq: number, now = new Date()): AuditEntry {
  const { marker, lastWrite } = stop;
  const started = marker.started ? Date.parse(marker.started) : NaN;
  // The stop came after the run's last write and after its start, whichever is later.
  const after = Math.max(
    lastWrite?.getTime() ?? -Infinity,
    Number.isNaN(started) ? -Infinity : started,
  );
  return {
    event: "audit.gap",
    time: now.toISOString(),
    reason: "unclean_stop",
    last_seq: lastSeq,
    ...(Number.isFinite(after) ? { stopped_after: new Date(after).toISOString() } : {}),
    ...(marker.pid ? { run_pid: marker.pid } : {}),
    ...(marker.started ? { run_started: marker.started } : {}),
    durability: marker.durability,
  };
}
