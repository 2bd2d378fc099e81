/**
 * C-GET in passes. PS3.4 leaves the presentation context of a C-STORE sub-operation to the SCP:
 * most pick one in the instance's transfer syntax, but some (DCMTK `dcmqrscp` to this day) take
 * the first context accepted for the SOP class and fail an instance stored in another syntax. So
 * the first C-GET proposes each class uncompressed first (what such a PACS sends native data on),
 * and the instances its final response lists as failed (Failed SOP Instance UID List, 0008,0058)
 * are asked for again at IMAGE level, one pass per compressed syntax, that syntax alone offered for
 * every class, until none is missing. Instances of a STUDY retrieval are located in their series
 * by a C-FIND first; a PATIENT retrieval is not retried.
 */
import type { ProposedContext, ScuAssociation } from "../../adapters/dimse/mod.ts";
import { type DicomJson, jsonString, SOP, STATUS, UNCOMPRESSED } from "../../dicom/mod.ts";
import { GatewayError } from "../../errors.ts";
import { runFind } from "./find.ts";
import { FileCollector, type RetrieveResult, runGet } from "./retrieve.ts";

/** Runs `fn` on an association proposing `contexts` (opened and released around it). */
export type Session = <T>(
  contexts: ProposedContext[],
  fn: (assoc: ScuAssociation) => Promise<T>,
) => Promise<T>;

/** What a C-GET offers (proposal.ts). */
export interface GetPlan {
  /** Contexts of the first C-GET. */
  contexts: ProposedContext[];
  /** Compressed syntaxes the request can take, in the order the passes try them. */
  syntaxes: readonly string[];
  /** Classes the passes offer (at most 126: a pass also proposes the GET and FIND models). */
  classes: readonly string[];
}

/** Storage classes a pass may propose besides the GET and FIND models. */
export const PASS_CLASSES = 126;

/** SOP Instance UIDs per C-GET request of a pass (a UI value holds at most 64 KiB). */
const UIDS_PER_REQUEST = 200;

/** The contexts of each pass after the first C-GET: per compressed syntax, it alone per class. */
export function passesOf(plan: GetPlan): ProposedContext[][] {
  return plan.syntaxes.map((ts) => [
    { abstractSyntax: SOP.studyRootGet, transferSyntaxes: UNCOMPRESSED },
    { abstractSyntax: SOP.studyRootFind, transferSyntaxes: UNCOMPRESSED },
    ...plan.classes.slice(0, PASS_CLASSES).map((uid) => ({
      abstractSyntax: uid,
      transferSyntaxes: [ts],
      scpRole: true,
    })),
  ]);
}

function single(identifier: DicomJson, tag: string): string | undefined {
  const values = identifier[tag]?.Value;
  return values?.length === 1 ? String(values[0]) : undefined;
}

function imageIdentifiers(study: string, series: string, uids: string[]): DicomJson[] {
  const out: DicomJson[] = [];
  for (let i = 0; i < uids.length; i += UIDS_PER_REQUEST) {
    out.push({
      "00080052": { vr: "CS", Value: ["IMAGE"] },
      "0020000D": { vr: "UI", Value: [study] },
      "0020000E": { vr: "UI", Value: [series] },
      "00080018": { vr: "UI", Value: uids.slice(i, i + UIDS_PER_REQUEST) },
    });
  }
  return out;
}

/**
 * IMAGE-level identifiers for the instances `uids` of the retrieval `identifier`: directly when it
 * names one study and one series, else by a C-FIND in its study; none without a study.
 */
export async function locate(
  assoc: ScuAssociation,
  identifier: DicomJson,
  uids: string[],
): Promise<DicomJson[]> {
  const study = single(identifier, "0020000D");
  if (!study) return [];
  const series = single(identifier, "0020000E");
  if (series) return imageIdentifiers(study, series, uids);
  const bySeries = new Map<string, string[]>();
  for (let i = 0; i < uids.length; i += UIDS_PER_REQUEST) {
    const found = await runFind(assoc, {
      level: "IMAGE",
      identifier: {
        "00080052": { vr: "CS", Value: ["IMAGE"] },
        "0020000D": { vr: "UI", Value: [study] },
        "0020000E": { vr: "UI" },
        "00080018": { vr: "UI", Value: uids.slice(i, i + UIDS_PER_REQUEST) },
      },
      offset: 0,
      fuzzy: false,
      includeAll: true,
    });
    for (const match of found.matches) {
      const s = jsonString(match, "0020000E")?.trim();
      const uid = jsonString(match, "00080018")?.trim();
      if (s && uid) bySeries.set(s, [...(bySeries.get(s) ?? []), uid]);
    }
  }
  return [...bySeries].flatMap(([s, list]) => imageIdentifiers(study, s, list));
}

/** The first result with the instances the passes recovered counted as completed. */
function merged(first: RetrieveResult, files: Uint8Array[], missing: string[]): RetrieveResult {
  const recovered = first.failed.length - missing.length;
  const counts = {
    ...first.counts,
    completed: first.counts.completed + recovered,
    failed: Math.max(0, first.counts.failed - recovered),
  };
  const status = counts.failed === 0 && counts.warning === 0
    ? STATUS.success
    : files.length === 0
    ? first.status
    : STATUS.warningSubOps;
  const comment = status === first.status ? first.comment : undefined;
  return { files, status, comment, counts, failed: missing };
}

/** C-GET `identifier` at `level` with `plan`, retrying failed instances (module comment). */
export async function getInPasses(
  session: Session,
  plan: GetPlan,
  level: string,
  identifier: DicomJson,
  opts: { limit: number; signal?: AbortSignal; onPassError?: (err: unknown) => void },
): Promise<RetrieveResult> {
  const collector = new FileCollector(opts.limit);
  const first = await session(plan.contexts, (a) => runGet(a, level, identifier, collector));
  const passes = passesOf(plan);
  if (first.failed.length === 0 || passes.length === 0 || level === "PATIENT") return first;
  if (first.status === STATUS.cancel) return first;
  let missing = first.failed.filter((uid) => !collector.instances.has(uid));
  let targets: DicomJson[] | undefined;
  for (const contexts of passes) {
    if (missing.length === 0) break;
    try {
      await session(contexts, async (a) => {
        targets ??= await locate(a, identifier, missing);
        for (const target of targets) await runGet(a, "IMAGE", target, collector);
      });
    } catch (err) {
      if (opts.signal?.aborted || err instanceof GatewayError) throw err;
      opts.onPassError?.(err);
      break;
    }
    if (targets?.length === 0) break;
    missing = missing.filter((uid) => !collector.instances.has(uid));
    targets = targets?.map((t) => ({
      ...t,
      "00080018": {
        vr: "UI",
        Value: (t["00080018"].Value as string[]).filter((uid) => !collector.instances.has(uid)),
      },
    })).filter((t) => t["00080018"].Value!.length > 0);
  }
  return merged(first, collector.files, missing);
}
