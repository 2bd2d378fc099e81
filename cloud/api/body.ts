/**
 * Request bodies: a size limit on every body, JSON parsing, and zod validation with field-level
 * messages (`422 validation_failed`, one entry per field).
 */
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, type FieldProblem } from "./errors.ts";

/** Default largest JSON body, bytes. */
export const MAX_JSON_BODY = 64 * 1024;

/** Reads the raw body, failing with 413 past `maxBytes` (whatever Content-Length says). */
export async function readBytes(c: Context, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const body = c.req.raw.body;
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, "payload_too_large", `the body is larger than ${maxBytes} bytes`);
}

/** Reads a JSON body (Content-Type application/json) and validates it with `schema`. */
export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  maxBytes = MAX_JSON_BODY,
): Promise<z.infer<S>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/(.+\+)?json\b/i.test(type)) {
    throw new ApiError(415, "unsupported_media_type", "send the body as application/json");
  }
  const bytes = await readBytes(c, maxBytes);
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new ApiError(
      400,
      "invalid_json",
      `the body is not valid JSON: ${(err as Error).message}`,
    );
  }
  return validate(schema, raw);
}

/** Validates `raw` with `schema`, throwing 422 with one message per field. */
export function validate<S extends z.ZodType>(schema: S, raw: unknown, what = "body"): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw validationError(
    result.error.issues.map((issue) => ({
      field: issue.path.map(String).join("."),
      message: issue.message,
    })),
    what,
  );
}

/** 422 `validation_failed` listing `fields`. */
export function validationError(fields: FieldProblem[], what = "body"): ApiError {
  const first = fields[0];
  const summary = first ? `${first.field ? `${first.field}: ` : ""}${first.message}` : "invalid";
  const more = fields.length > 1 ? ` (and ${fields.length - 1} more)` : "";
  return new ApiError(422, "validation_failed", `invalid ${what}: ${summary}${more}`, { fields });
}
