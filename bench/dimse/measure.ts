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
}

/** Send every file in `dir` with one `storescu` association; fails unless all were stored. */
export async function storescu(
  dir: string,
  count: number,
  bytes: number,
  aet: string,
  port: number,
): Promise<StoreRun> {
  const started = performance.now();
  const r = await runCommand("storescu", ["-aec", aet, "+sd", "127.0.0.1", String(port), dir], {
    timeoutMs: 600_000,
    env: DCMTK_ENV,
  });
  const seconds = (performance.now() - started) / 1000;
  if (r.code !== 0) throw new Error(`storescu to ${aet} failed: ${r.stderr.slice(-2000)}`);
  return { seconds, instancesPerSec: count / seconds, mbPerSec: bytes / 1e6 / seconds };
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
