/**
 * The C-GET proposal options of a `dicom_scu` backend: `retrieve_sop_classes` and
 * `retrieve_transfer_syntaxes` (keywords or UIDs of dicom_catalog.ts), and the budget rule that
 * keeps their presentation contexts within what one association may propose.
 *
 * An acceptor picks one transfer syntax per presentation context (PS3.8 9.3.2.2), so each
 * (SOP class, compressed syntax) pair needs its own context, and an association carries at most
 * 128 (context IDs are the odd numbers 1-255). One goes to the C-GET model and one uncompressed
 * context to every storage class (the catalog's and the listed ones): a PACS such as Orthanc fails
 * the whole C-GET when one instance's class has no context, while a missing compressed context
 * only makes it decompress. So: uncompressed classes + classes x syntaxes + 1 <= 128.
 */
import { z } from "zod";
import {
  COMPRESSED_SYNTAXES,
  compressedSyntaxUid,
  DEFAULT_RETRIEVE_SOP_CLASSES,
  DEFAULT_RETRIEVE_TRANSFER_SYNTAXES,
  STORAGE_CLASSES,
  storageClassUid,
  uidOf,
  UNCOMPRESSED_SYNTAXES,
} from "./dicom_catalog.ts";
import { field, type TableSpec } from "./fields.ts";
import { didYouMean } from "./suggest.ts";

/** Presentation contexts one association may propose (PS3.8: odd IDs 1-255). */
export const MAX_PRESENTATION_CONTEXTS = 128;

/** The storage classes a C-GET proposes uncompressed: the catalog's, then `classes` not in it. */
export function uncompressedClasses(classes: readonly string[]): string[] {
  return [...new Set([...Object.values(STORAGE_CLASSES), ...classes])];
}

/** Contexts of a C-GET offering `syntaxes` compressed syntaxes for `classes` (UIDs). */
export function requiredContexts(classes: readonly string[], syntaxes: number): number {
  return uncompressedClasses(classes).length + classes.length * syntaxes + 1;
}

/** Reports entries naming the same UID twice (by keyword and UID, or twice the same). */
function noDuplicates(resolve: (name: string) => string | undefined) {
  return (names: string[], ctx: z.core.$RefinementCtx<string[]>) => {
    const seen = new Map<string, string>();
    names.forEach((name, i) => {
      const uid = resolve(name);
      if (uid === undefined) return;
      const first = seen.get(uid);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          input: name,
          path: [i],
          message: `\`${name}\` is listed twice (as \`${first}\`)`,
        });
      } else seen.set(uid, name);
    });
  };
}

/** A storage SOP class: a keyword of the catalog or a UID. */
const sopClass = z.string().min(1).superRefine((name, ctx) => {
  if (storageClassUid(name) !== undefined) return;
  ctx.addIssue({
    code: "custom",
    input: name,
    message: `unknown storage SOP class \`${name}\`: use a PS3.6 keyword ` +
      `(e.g. CTImageStorage) or a UID${didYouMean(name, Object.keys(STORAGE_CLASSES))}`,
  });
});

/** A compressed transfer syntax: a keyword of the catalog or its UID. */
const compressedSyntax = z.string().min(1).superRefine((name, ctx) => {
  if (compressedSyntaxUid(name) !== undefined) return;
  const message = uidOf(UNCOMPRESSED_SYNTAXES, name) !== undefined
    ? `\`${name}\` is not a compressed transfer syntax: Explicit and Implicit VR Little Endian ` +
      "are always proposed, Deflated and Big Endian never"
    : `unknown compressed transfer syntax \`${name}\`: use a PS3.6 keyword (e.g. ` +
      `JPEGLosslessSV1) or its UID${didYouMean(name, Object.keys(COMPRESSED_SYNTAXES))}`;
  ctx.addIssue({ code: "custom", input: name, message });
});

/** The option keys (merged into the `dicom_scu` backend's fields). */
export const RETRIEVE_FIELDS: TableSpec = {
  retrieve_sop_classes: field(
    "array of strings",
    z.array(sopClass).superRefine(noDuplicates(storageClassUid)),
    "Storage SOP classes (PS3.6 keywords or UIDs) C-GET also offers in each of " +
      "`retrieve_transfer_syntaxes`, one context per class and syntax (every storage class gets " +
      "an uncompressed one); see docs/dicom.md for the 128-context budget.",
    {
      default: [...DEFAULT_RETRIEVE_SOP_CLASSES],
      example: ["CTImageStorage", "MRImageStorage", "1.2.840.10008.5.1.4.1.1.7"],
    },
  ),
  retrieve_transfer_syntaxes: field(
    "array of strings",
    z.array(compressedSyntax).superRefine(noDuplicates(compressedSyntaxUid)),
    "Compressed transfer syntaxes (PS3.6 keywords or UIDs) C-GET accepts instances in, as " +
      "stored; `[]` proposes only uncompressed syntaxes (a PACS that can must decompress).",
    {
      default: [...DEFAULT_RETRIEVE_TRANSFER_SYNTAXES],
      example: ["JPEGLosslessSV1", "JPEG2000Lossless", "1.2.840.10008.1.2.5"],
    },
  ),
  retrieve_sop_class_lookup: field(
    "boolean",
    z.boolean(),
    "Before a C-GET, ask the PACS (C-FIND at IMAGE level) which SOP classes the study, series or " +
      "instances hold and propose exactly those, in every acceptable compressed syntax: any " +
      "storage class comes back as stored. Without an answer, the configured proposal.",
    { default: true, example: false },
  ),
};

/** The budget rule, on valid options; a problem at `retrieve_sop_classes` when it is broken. */
export function retrieveBudgetProblems(
  o: Record<string, unknown>,
): { key: string; message: string }[] {
  const classes = ((o.retrieve_sop_classes as string[] | undefined) ?? [])
    .map((n) => storageClassUid(n)!);
  const syntaxes = (o.retrieve_transfer_syntaxes as string[] | undefined)?.length ?? 0;
  const needed = requiredContexts(classes, syntaxes);
  if (needed <= MAX_PRESENTATION_CONTEXTS) return [];
  const uncompressed = uncompressedClasses(classes).length;
  const fit = Math.floor((MAX_PRESENTATION_CONTEXTS - 1 - uncompressed) / syntaxes);
  const advice = fit >= 1
    ? `list at most ${fit} classes with ${syntaxes} syntaxes, or fewer syntaxes`
    : `list fewer classes outside the ${Object.keys(STORAGE_CLASSES).length} of the catalog`;
  return [{
    key: "retrieve_sop_classes",
    message: `${classes.length} classes x ${syntaxes} transfer syntaxes need ` +
      `${classes.length * syntaxes} compressed presentation contexts; with one uncompressed ` +
      `context for each of ${uncompressed} storage classes and one for the C-GET model that is ` +
      `${needed}, over the ${MAX_PRESENTATION_CONTEXTS} an association may propose: ${advice}`,
  }];
}
