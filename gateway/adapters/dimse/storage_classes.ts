/** Presentation contexts for storage: C-GET retrieval (SCP role) and C-STORE sending. */
import { isEncapsulated, type P10File, TS, UNCOMPRESSED } from "../../dicom/mod.ts";
import type { ProposedContext } from "./client.ts";

/** What a C-GET proposes for the instances it receives (SCP role). */
export interface RetrievePlan {
  /** Storage classes, each with an uncompressed context, in this order. */
  classes: readonly string[];
  /** Classes also offered in each compressed syntax (in order). */
  compressedClasses: readonly string[];
  /** Compressed syntaxes: one context per compressed class and syntax. */
  compressedSyntaxes: readonly string[];
  /** Contexts the storage proposal may use (the association's 128 less the C-GET model's). */
  budget: number;
}

/**
 * Storage contexts of a C-GET, SCP role: first one context with Explicit and Implicit VR Little
 * Endian per class (a PACS that sends on the first context of a class sends native data on it),
 * then for each compressed class one context per compressed syntax (an acceptor accepts one syntax
 * per context, PS3.8 9.3.2.2, so a PACS picks the context in the syntax it holds), a class's
 * contexts all or none, as far as the budget goes.
 */
export function retrieveContexts(plan: RetrievePlan): ProposedContext[] {
  const out: ProposedContext[] = [];
  const proposed = new Set<string>();
  for (const uid of new Set(plan.classes)) {
    if (out.length >= plan.budget) return out;
    proposed.add(uid);
    out.push({ abstractSyntax: uid, transferSyntaxes: UNCOMPRESSED, scpRole: true });
  }
  const n = plan.compressedSyntaxes.length;
  for (const uid of new Set(plan.compressedClasses)) {
    if (n === 0 || out.length + n > plan.budget) break;
    if (!proposed.has(uid)) continue;
    // The SCP role is negotiated per SOP class (PS3.7 D.3.3.4: one role selection item per
    // class), so only the class's uncompressed context asks for it; the answer covers all.
    for (const ts of plan.compressedSyntaxes) {
      out.push({ abstractSyntax: uid, transferSyntaxes: [ts] });
    }
  }
  return out;
}

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
