/** Errors of the store, mapped to HTTP answers by the API. */

/** Why a store operation failed. */
export type StoreErrorCode =
  | "not_found"
  | "name_taken"
  | "reference_missing"
  | "in_use"
  | "conflict"
  | "too_large"
  | "forbidden"
  | "invalid";

/** A store operation that cannot be done as asked. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  /** The field at fault, when one is. */
  readonly field?: string;
  /** Extra facts (e.g. the records that still use the one being deleted). */
  readonly details?: Record<string, unknown>;

  constructor(
    code: StoreErrorCode,
    message: string,
    extra: { field?: string; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = "StoreError";
    this.code = code;
    this.field = extra.field;
    this.details = extra.details;
  }
}
