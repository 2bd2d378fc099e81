/**
 * `retrieve_sop_class_lookup`: before a C-GET of one instance, a C-FIND at IMAGE level asks the
 * PACS for its SOP Class UID (0008,0016) and, when it keeps it, its Available Transfer Syntax UID
 * (0008,3002). Knowing the class, the C-GET can offer it in every compressed syntax (or the one
 * available) instead of the configured classes x syntaxes. PACS that do not return the class
 * (DCMTK dcmqrscp) leave the usual proposal in place.
 */
import type { ScuAssociation } from "../../adapters/dimse/mod.ts";
import { type DicomJson, jsonString, statusKind } from "../../dicom/mod.ts";
import { runFind } from "./find.ts";

/** What the PACS said about the instance. */
export interface InstanceClass {
  sopClassUid: string;
  /** The syntax the PACS holds it in, when it says so. */
  transferSyntax?: string;
}

/** The one SOP Instance UID a retrieval identifier names at IMAGE level, if any. */
export function singleInstance(level: string, identifier: DicomJson): string | undefined {
  const uids = identifier["00080018"]?.Value;
  return level === "IMAGE" && uids?.length === 1 && typeof uids[0] === "string"
    ? uids[0]
    : undefined;
}

/** The C-FIND identifier asking for the class of `instanceUid` (study/series keys kept). */
export function lookupIdentifier(identifier: DicomJson, instanceUid: string): DicomJson {
  const out: DicomJson = {
    "00080016": { vr: "UI" },
    "00080018": { vr: "UI", Value: [instanceUid] },
    "00080052": { vr: "CS", Value: ["IMAGE"] },
    "00083002": { vr: "UI" },
  };
  for (const tag of ["0020000D", "0020000E"]) {
    if (identifier[tag]?.Value?.length) out[tag] = identifier[tag];
  }
  return out;
}

/** Ask over `assoc` (Study Root C-FIND accepted); undefined when the PACS does not say. */
export async function lookupSopClass(
  assoc: ScuAssociation,
  identifier: DicomJson,
  instanceUid: string,
): Promise<InstanceClass | undefined> {
  const result = await runFind(assoc, {
    level: "IMAGE",
    identifier: lookupIdentifier(identifier, instanceUid),
    offset: 0,
    limit: 1,
    fuzzy: false,
    includeAll: true,
  });
  if (statusKind(result.status) !== "success") return undefined;
  const match = result.matches[0];
  const sopClassUid = match && jsonString(match, "00080016")?.trim();
  if (!sopClassUid) return undefined;
  const transferSyntax = jsonString(match, "00083002")?.trim();
  return transferSyntax ? { sopClassUid, transferSyntax } : { sopClassUid };
}
