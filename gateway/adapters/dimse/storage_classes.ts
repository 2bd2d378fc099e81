/** Storage SOP classes proposed (with the SCP role) when retrieving with C-GET. */
import { UNCOMPRESSED } from "../../dicom/mod.ts";
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
