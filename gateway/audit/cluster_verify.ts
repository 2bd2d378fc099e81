/**
 * `gateway audit verify` over the trails of several gateways (a cluster: each node keeps its own
 * chain). The paths given (files or directories) are sorted into trails: a trail is an active
 * file with its rotated siblings (`<file>.<UTC time>`) and run marker (`<file>.open`), so the
 * files of a node are recognised by their directory and name. A directory contributes every
 * `*.jsonl` trail in it and in its sub-directories. Each trail's chain is checked on its own
 * (verifyAuditFiles); the verdict is intact only when every trail is.
 */
import { basename, dirname, join, resolve } from "node:path";
import { verifyAuditFiles, type VerifyReport } from "./chain.ts";
import { MARKER_SUFFIX } from "./run_marker.ts";

/** A rotated sibling's suffix (audit_file.ts): `.20261125T193000.123Z`, maybe `-N`. */
const ROTATED_SUFFIX = /\.\d{8}T\d{6}\.\d{3}Z(-\d+)?$/;
/** Bounds of a directory walk. */
const MAX_DEPTH = 8;
const MAX_FILES = 100_000;

/** One node's trail and its verdict. */
export interface TrailReport extends VerifyReport {
  /** The active file's path (which may no longer exist when only rotated files were given). */
  trail: string;
  /** The files read. */
  files: string[];
}

/** The verdict on the trails of several nodes. */
export interface ClusterVerifyReport {
  /** True when every trail's chain is unbroken. */
  ok: boolean;
  /** Per trail, in path order. */
  trails: TrailReport[];
  /** Paths that could not be read or held no trail. */
  problems: string[];
  /** Recorded gaps over all trails. */
  gaps: number;
}

/** The trail `file` belongs to: its active file's path. */
export function trailOf(file: string): string {
  const path = resolve(file);
  if (path.endsWith(MARKER_SUFFIX)) return path.slice(0, -MARKER_SUFFIX.length);
  return path.replace(ROTATED_SUFFIX, "");
}

/** Files of `dir` (and below) that belong to `*.jsonl` trails. */
async function trailFilesIn(dir: string, out: string[], depth = 0): Promise<void> {
  if (depth > MAX_DEPTH) return;
  const entries: Deno.DirEntry[] = [];
  for await (const entry of Deno.readDir(dir)) entries.push(entry);
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (out.length >= MAX_FILES) throw new Error(`more than ${MAX_FILES} files under ${dir}`);
    const path = join(dir, entry.name);
    if (entry.isDirectory) await trailFilesIn(path, out, depth + 1);
    else if (entry.isFile && trailOf(path).endsWith(".jsonl")) out.push(path);
  }
}

/**
 * Sorts `paths` (files and directories) into trails and checks each. A single trail reports as
 * verifyAuditFiles does.
 */
export async function verifyAuditTrails(paths: string[]): Promise<ClusterVerifyReport> {
  const problems: string[] = [];
  const files: string[] = [];
  for (const path of paths) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch (err) {
      problems.push(`${path}: cannot be read: ${(err as Error).message}`);
      continue;
    }
    if (!info.isDirectory) {
      files.push(resolve(path));
      continue;
    }
    const found: string[] = [];
    try {
      await trailFilesIn(path, found);
    } catch (err) {
      problems.push(`${path}: ${(err as Error).message}`);
    }
    if (!found.length) problems.push(`${path}: no audit trail (*.jsonl) in this directory`);
    files.push(...found.map((f) => resolve(f)));
  }
  const byTrail = new Map<string, Set<string>>();
  for (const file of files) {
    const trail = trailOf(file);
    let set = byTrail.get(trail);
    if (!set) byTrail.set(trail, set = new Set());
    set.add(file);
  }
  const trails: TrailReport[] = [];
  for (const [trail, set] of [...byTrail].sort(([a], [b]) => a.localeCompare(b))) {
    const list = [...set];
    trails.push({ trail, files: list, ...(await verifyAuditFiles(list)) });
  }
  return {
    ok: problems.length === 0 && trails.length > 0 && trails.every((t) => t.ok),
    trails,
    problems,
    gaps: trails.reduce((n, t) => n + t.gaps, 0),
  };
}

/** The lines `gateway audit verify` prints for `report` (one trail: as before, no headings). */
export function clusterReportLines(report: ClusterVerifyReport): string[] {
  const lines = [...report.problems];
  if (report.trails.length === 1 && report.problems.length === 0) {
    lines.push(...report.trails[0].lines);
  } else {
    for (const t of report.trails) {
      lines.push(`trail ${t.trail} (${basename(dirname(t.trail))}):`);
      lines.push(...t.lines.map((l) => `  ${l}`));
      lines.push(
        `  => ${t.ok ? "intact" : "BROKEN"}` +
          (t.gaps ? `, ${t.gaps} recorded gap(s): records are missing where listed` : ""),
      );
    }
    const broken = report.trails.filter((t) => !t.ok).length;
    lines.push(
      `${report.trails.length} trails: ${report.trails.length - broken} intact, ${broken} broken` +
        (report.gaps ? `, ${report.gaps} recorded gap(s) in all` : ""),
    );
  }
  return lines;
}
