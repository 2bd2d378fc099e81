/** Why a preview gave no output although spec and sample are valid: a limit stopped it. */

/** Stable codes of {@link PreviewLimitError}. */
export type PreviewLimitCode =
  | "transform_budget_exceeded"
  | "preview_deadline_exceeded"
  | "preview_busy";

/**
 * A preview stopped by its work budget or its deadline (422: this spec on this sample does too
 * much), or refused because too many previews wait (503, try again in a second).
 */
export class PreviewLimitError extends Error {
  /** Stable code. */
  readonly code: PreviewLimitCode;
  /** HTTP status the API answers with. */
  readonly status: 422 | 503;
  /** The limit, for the error body (`budget_steps`, `deadline_ms`, `retry_after_s`). */
  readonly details: Record<string, number>;

  /** A `code` error saying `message`, with the limit's figure in `details`. */
  constructor(code: PreviewLimitCode, message: string, details: Record<string, number>) {
    super(message);
    this.name = "PreviewLimitError";
    this.code = code;
    this.status = code === "preview_busy" ? 503 : 422;
    this.details = details;
  }
}
