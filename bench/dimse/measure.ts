/** Measurements of the DIMSE benchmark: storescu runs and C-FIND round trips. */
import { JsonDataset, lib, ScuAssociation } from "../../gateway/adapters/dimse/mod.ts";
import { SOP, UNCOMPRESSED } from "../../gateway/dicom/mod.ts";
import { DCMTK_ENV } from "../../fixtures/dicom/peers.ts";
import { runCommand } from "../../tests/support/mod.ts";

/** Throughput of one storescu run. */
export interface StoreRun {
  seconds: number;
  instancesPerSec: number;
  mbPerSec: number;
  /** CPU time of the receiving process per instance (ms), when readable. */
  cpuMsPerInstance?: number;
}

let ticksPerSecond: number | undefined;

/**
 * CPU seconds (user + system, all threads, and the children it has waited for: `storescp --fork`'s
 * association processes) a process has used so far; undefined off Linux.
 */
export async function cpuSeconds(pid: number): Promise<number | undefined> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15,
    // cutime 16, cstime 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (ticksPerSecond === undefined) {
      const r = await runCommand("getconf", ["CLK_TCK"], { timeoutMs: 5_000 });
      ticksPerSecond = Number(r.stdout.trim()) || 100;
    }
    const ticks = [11, 12, 13, 14].reduce((n, i) => n + Number(fields[i]), 0);
    return ticks / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/**
 * Send every file in `dir` with one `storescu` association to the receiver `pid` listening on
 * `port`; fails unless all were stored.
 */
export async function storescu(
  dir: string,
  count: number,
  bytes: number,
  receiver: { aet: string; port: number; pid: number },
): Promise<StoreRun> {
  const cpuBefore = await cpuSeconds(receiver.pid);
  const started = performance.now();
  const r = await runCommand(
    "storescu",
    ["-aec", receiver.aet, "+sd", "127.0.0.1", String(receiver.port), dir],
    { timeoutMs: 600_000, env: DCMTK_ENV },
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuSeconds(receiver.pid);
  if (r.code !== 0) throw new Error(`storescu to ${receiver.aet} failed: ${r.stderr.slice(-2000)}`);
  const run: StoreRun = {
    seconds,
    instancesPerSec: count / seconds,
    mbPerSec: bytes / 1e6 / seconds,
  };
  if (cpuBefore !== undefined && cpuAfter !== undefined) {
    run.cpuMsPerInstance = (cpuAfter - cpuBefore) * 1000 / count;
  }
  return run;
}

/**
 * Send the files of each of `dirs` with its own `storescu` process, all at once (one association
 * each), to the receiver; the run lasts until the last one is done. Fails unless all were stored.
 */
export async function storescuParallel(
  dirs: string[],
  count: number,
  bytes: number,
  receiver: { aet: string; port: number; pid: number },
): Promise<StoreRun> {
  const cpuBefore = await cpuSeconds(receiver.pid);
  const started = performance.now();
  const results = await Promise.all(dirs.map((dir) =>
    runCommand(
      "storescu",
      ["-aec", receiver.aet, "+sd", "127.0.0.1", String(receiver.port), dir],
      { timeoutMs: 600_000, env: DCMTK_ENV },
    )
  ));
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuSeconds(receiver.pid);
  for (const r of results) {
    if (r.code !== 0) {
      throw new Error(`storescu to ${receiver.aet} failed: ${r.stderr.slice(-2000)}`);
    }
  }
  const run: StoreRun = {
    seconds,
    instancesPerSec: count / seconds,
    mbPerSec: bytes / 1e6 / seconds,
  };
  if (cpuBefore !== undefined && cpuAfter !== undefined) {
    run.cpuMsPerInstance = (cpuAfter - cpuBefore) * 1000 / count;
  }
  return run;
}

/** The median of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The value at quantile `q` (0..1) of sorted samples. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Round trips (ms, sorted) of `n` study-level C-FINDs for `studyUid` on one association. */
export async function findRoundTrips(
  port: number,
  calledAet: string,
  studyUid: string,
  n: number,
): Promise<number[]> {
  const assoc = await ScuAssociation.open({
    host: "127.0.0.1",
    port,
    callingAet: "BENCH",
    calledAet,
    contexts: [{ abstractSyntax: SOP.studyRootFind, transferSyntaxes: UNCOMPRESSED }],
  });
  const ts = assoc.accepted(SOP.studyRootFind)!.getAcceptedTransferSyntaxUid()!;
  const samples: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const req = new lib.requests.CFindRequest();
      req.setDataset(
        new JsonDataset({
          "00080052": { vr: "CS", Value: ["STUDY"] },
          "0020000D": { vr: "UI", Value: [studyUid] },
          "00100020": { vr: "LO" },
        }, ts),
      );
      let matches = 0;
      const started = performance.now();
      const final = await assoc.request(req, () => matches++);
      samples.push(performance.now() - started);
      if (final.getStatus() !== 0 || matches !== 1) {
        throw new Error(`C-FIND to ${calledAet}: status ${final.getStatus()}, ${matches} matches`);
      }
    }
  } finally {
    await assoc.release();
  }
  return samples.sort((a, b) => a - b);
}
