/**
 * `retrieve_sop_class_lookup` (on by default): before a C-GET, a C-FIND at IMAGE level over what
 * the retrieval names (a study, a series, one or a few instances) asks the PACS for the SOP Class
 * UID (0008,0016) of each instance and, when it keeps it, the Available Transfer Syntax UID
 * (0008,3002). Knowing the classes, the C-GET offers exactly those, any storage class of PS3.4
 * Annex B (not only the catalog's), each in every compressed syntax it may be held in. PACS that
 * do not return the class (DCMTK dcmqrscp), a PATIENT-level retrieval and a scope of more than
 * LOOKUP_MAX_INSTANCES instances leave the configured proposal in place.
 */
import type { ScuAssociation } from "../../adapters/dimse/mod.ts";
import { type DicomJson, jsonString, statusKind } from "../../dicom/mod.ts";
import { runFind } from "./find.ts";

/** Instances one lookup reads at most; past that the configured proposal is used. */
export const LOOKUP_MAX_INSTANCES = 10_000;

/** What the PACS said about the instances a retrieval names. */
export interface RetrievalClasses {
  /** The SOP classes, the most frequent first. */
  classes: string[];
  /** The syntaxes the instances are held in, when the PACS said so for every one. */
  transferSyntaxes?: string[];
}

/** The C-FIND identifier asking for the classes of what a retrieval names, or undefined. */
export function lookupIdentifier(level: string, identifier: DicomJson): DicomJson | undefined {
  const keys: Record<string, string[]> = {
    STUDY: ["0020000D"],
    SERIES: ["0020000D", "0020000E"],
    IMAGE: ["0020000D", "0020000E", "00080018"],
  };
  const wanted = keys[level];
  if (!wanted) return undefined;
  const out: DicomJson = {
    "00080016": { vr: "UI" },
    "00080018": { vr: "UI" },
    "00080052": { vr: "CS", Value: ["IMAGE"] },
    "00083002": { vr: "UI" },
  };
  for (const tag of wanted) {
    if (identifier[tag]?.Value?.length) out[tag] = identifier[tag];
  }
  // The level's own key must be there: a lookup over the whole archive is no lookup.
  const own = wanted[wanted.length - 1];
  return out[own]?.Value?.length ? out : undefined;
}

/** Ask over `assoc` (Study Root C-FIND accepted); undefined when the PACS does not say. */
export async function lookupSopClasses(
  assoc: ScuAssociation,
  level: string,
  identifier: DicomJson,
): Promise<RetrievalClasses | undefined> {
  const query = lookupIdentifier(level, identifier);
  if (!query) return undefined;
  const result = await runFind(assoc, {
    level: "IMAGE",
    identifier: query,
    offset: 0,
    limit: LOOKUP_MAX_INSTANCES + 1,
    fuzzy: false,
    includeAll: true,
  });
  const { matches } = result;
  if (statusKind(result.status) !== "success" || matches.length === 0) return undefined;
  if (matches.length > LOOKUP_MAX_INSTANCES) return undefined;
  const counts = new Map<string, number>();
  const syntaxes = new Set<string>();
  let everySyntax = true;
  for (const match of matches) {
    const sopClass = jsonString(match, "00080016")?.trim();
    if (!sopClass) return undefined; // A class unknown: the proposal could miss it.
    counts.set(sopClass, (counts.get(sopClass) ?? 0) + 1);
    const ts = jsonString(match, "00083002")?.trim();
    if (ts) syntaxes.add(ts);
    else everySyntax = false;
  }
  const classes = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([uid]) => uid);
  return everySyntax ? { classes, transferSyntaxes: [...syntaxes] } : { classes };
}
