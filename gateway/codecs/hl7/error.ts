/** The HL7 v2 codec's error: a stable code and, when known, the segment and field it names. */

/** Why an HL7 v2 text was refused. */
export type Hl7ErrorCode =
  | "no_msh"
  | "bad_delimiters"
  | "too_large"
  | "too_many_segments"
  | "too_many_fields"
  | "too_many_repetitions"
  | "too_many_components"
  | "bad_segment"
  | "bad_batch"
  | "no_msa"
  | "bad_ack"
  | "bad_json";

/** A refused HL7 v2 text (or JSON that has no ER7 form), naming the place when known. */
export class Hl7Error extends Error {
  /** Machine-readable reason. */
  readonly code: Hl7ErrorCode;
  /** The segment's name (e.g. `MSH`), when the problem is inside one. */
  readonly segment?: string;
  /** The field's number (HL7's 1-based sequence), when the problem is inside one. */
  readonly field?: number;

  /** An error with this code and message, optionally naming a segment and field. */
  constructor(
    code: Hl7ErrorCode,
    message: string,
    where: { segment?: string; field?: number } = {},
  ) {
    super(message);
    this.name = "Hl7Error";
    this.code = code;
    if (where.segment !== undefined) this.segment = where.segment;
    if (where.field !== undefined) this.field = where.field;
  }
}
