/** Turning S3 SDK failures into gateway errors. */
import { GatewayError } from "../../errors.ts";

/** The parts of an SDK error that matter here. */
interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** HTTP status of an S3 error response, or undefined for a failure without one. */
export function s3Status(err: unknown): number | undefined {
  return (err as SdkError)?.$metadata?.httpStatusCode;
}

/** True when S3 said there is no such object. */
export function isS3NotFound(err: unknown): boolean {
  const name = (err as SdkError)?.name;
  return s3Status(err) === 404 || name === "NotFound" || name === "NoSuchKey";
}

/** True when a conditional write found the key taken (`If-None-Match: *`). */
export function isS3PreconditionFailed(err: unknown): boolean {
  const name = (err as SdkError)?.name;
  return s3Status(err) === 412 || name === "PreconditionFailed" ||
    name === "ConditionalRequestConflict";
}

/**
 * 502 `storage_error` when S3 answered with an error (access denied, no such bucket, ...),
 * 502 `backend_unavailable` when it could not be reached at all.
 */
export function s3Error(err: unknown, operation: string, key: string): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as SdkError;
  const status = s3Status(err);
  const what = `${e?.name ?? "Error"}${e?.message ? `: ${e.message}` : ""}`;
  if (status !== undefined) {
    return new GatewayError(
      502,
      "storage_error",
      `S3 ${operation} of "${key}" failed with HTTP ${status} (${what})`,
    );
  }
  return new GatewayError(
    502,
    "backend_unavailable",
    `S3 ${operation} of "${key}" failed: ${what}`,
  );
}
