/** Limits on what the HL7 v2 codec reads: each one refuses the text with an Hl7Error. */

/** Caps on one ER7 text; the depth is fixed by the grammar (field, repetition, component, sub-component). */
export interface Hl7Limits {
  /** Characters of the whole text (`too_large`). */
  maxBytes: number;
  /** Segments of the whole text, batch headers included (`too_many_segments`). */
  maxSegments: number;
  /** Fields of one segment (`too_many_fields`). */
  maxFieldsPerSegment: number;
  /** Repetitions of one field (`too_many_repetitions`). */
  maxRepetitions: number;
  /** Components of one repetition, and sub-components of one component (`too_many_components`). */
  maxComponents: number;
}

/** The defaults: 16 MiB, 100,000 segments, 1,000 fields, 1,000 repetitions, 100 components. */
export const DEFAULT_HL7_LIMITS: Readonly<Hl7Limits> = Object.freeze({
  maxBytes: 16 * 1024 * 1024,
  maxSegments: 100_000,
  maxFieldsPerSegment: 1_000,
  maxRepetitions: 1_000,
  maxComponents: 100,
});

/** The defaults with the given limits overridden. */
export function hl7Limits(overrides: Partial<Hl7Limits> = {}): Hl7Limits {
  return { ...DEFAULT_HL7_LIMITS, ...overrides };
}
