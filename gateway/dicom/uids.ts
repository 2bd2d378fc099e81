/** UIDs the gateway speaks: transfer syntaxes, service SOP classes and storage SOP classes. */
/** Transfer syntax UIDs by name. */
export const TS = {
  implicitLE: "1.2.840.10008.1.2",
  explicitLE: "1.2.840.10008.1.2.1",
  deflatedLE: "1.2.840.10008.1.2.1.99",
  explicitBE: "1.2.840.10008.1.2.2",
} as const;

/** The uncompressed transfer syntaxes every association offers (Explicit first). */
export const UNCOMPRESSED: readonly string[] = [TS.explicitLE, TS.implicitLE];

/** Service SOP classes (verification and query/retrieve). */
export const SOP = {
  verification: "1.2.840.10008.1.1",
  patientRootFind: "1.2.840.10008.5.1.4.1.2.1.1",
  patientRootMove: "1.2.840.10008.5.1.4.1.2.1.2",
  patientRootGet: "1.2.840.10008.5.1.4.1.2.1.3",
  studyRootFind: "1.2.840.10008.5.1.4.1.2.2.1",
  studyRootMove: "1.2.840.10008.5.1.4.1.2.2.2",
  studyRootGet: "1.2.840.10008.5.1.4.1.2.2.3",
  /** Modality Worklist Information Model - FIND (PS3.4 K.6.1). */
  modalityWorklistFind: "1.2.840.10008.5.1.4.31",
} as const;

/** Query/retrieve SOP classes per DIMSE service. */
export const QR_CLASSES: Readonly<Record<"find" | "move" | "get", readonly string[]>> = {
  find: [SOP.studyRootFind, SOP.patientRootFind, SOP.modalityWorklistFind],
  move: [SOP.studyRootMove, SOP.patientRootMove],
  get: [SOP.studyRootGet, SOP.patientRootGet],
};

/** True for a storage SOP class (PS3.4 B.5: under 1.2.840.10008.5.1.4.1.1.). */
export function isStorageClass(uid: string): boolean {
  return uid.startsWith("1.2.840.10008.5.1.4.1.1.");
}

/** True for a transfer syntax whose pixel data is encapsulated (compressed). */
export function isEncapsulated(ts: string): boolean {
  return ts !== TS.implicitLE && ts !== TS.explicitLE && ts !== TS.explicitBE &&
    ts !== TS.deflatedLE;
}

/** A new UID under the UUID-derived root 2.25 (PS3.5 B.2). */
export function newUid(): string {
  const hex = crypto.randomUUID().replaceAll("-", "");
  return `2.25.${BigInt("0x" + hex).toString()}`;
}
