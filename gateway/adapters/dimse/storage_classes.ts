/** Presentation contexts for storage: C-GET retrieval (SCP role) and C-STORE sending. */
import { isEncapsulated, type P10File, TS, UNCOMPRESSED } from "../../dicom/mod.ts";
import type { ProposedContext } from "./client.ts";
import { lib } from "./lib.ts";

const CLASSES = [
  ...new Set([
    ...Object.values(lib.constants.StorageClass as unknown as Record<string, string>),
    "1.2.840.10008.5.1.4.1.1.481.2", // RT Dose
    "1.2.840.10008.5.1.4.1.1.481.3", // RT Structure Set
    "1.2.840.10008.5.1.4.1.1.66", // Raw Data
  ]),
];

/** One context per storage class, uncompressed syntaxes, SCP role (at most 128 in all). */
export const STORAGE_CONTEXTS: readonly ProposedContext[] = CLASSES.slice(0, 120).map((uid) => ({
  abstractSyntax: uid,
  transferSyntaxes: UNCOMPRESSED,
  scpRole: true,
}));

/**
 * Contexts for `files`: an uncompressed instance offers Explicit and Implicit VR Little Endian
 * (its own first); a compressed one offers its own syntax, so it is sent as it is.
 */
export function storeContexts(files: P10File[]): ProposedContext[] {
  const seen = new Set<string>();
  const out: ProposedContext[] = [];
  for (const f of files) {
    const ts = f.meta.transferSyntax;
    const syntaxes = isEncapsulated(ts) || ts === TS.explicitBE || ts === TS.deflatedLE
      ? [ts]
      : [ts, ...[TS.explicitLE, TS.implicitLE].filter((t) => t !== ts)];
    const key = `${f.meta.sopClassUid}|${syntaxes.join(",")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ abstractSyntax: f.meta.sopClassUid, transferSyntaxes: syntaxes });
  }
  return out;
}
