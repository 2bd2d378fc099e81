/**
 * What a stored path may look like. Every path the storage backend touches is relative to the
 * root, made of `/`-separated segments, and checked here before any I/O: no absolute paths, no
 * `.`/`..`, no empty segments, no backslashes, NUL or other control characters, and no segment
 * starting with `.` (that namespace holds the backend's own temporary and sidecar files).
 */
import { GatewayError } from "../../errors.ts";

/** Longest segment in UTF-8 bytes: leaves room below NAME_MAX (255) for `.<name>.meta.json`. */
export const MAX_SEGMENT_BYTES = 200;
/** Longest path in UTF-8 bytes (the S3 key limit is 1024, the prefix included). */
export const MAX_PATH_BYTES = 900;

const ENCODER = new TextEncoder();
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * Why `path` is not an acceptable stored path, or null when it is. `fragment` checks a value
 * that is only part of a path (a substituted placeholder): a segment may then start with `.`
 * (`{ext}` = `.json`), since the whole path is checked again once assembled.
 */
export function pathProblem(path: string, fragment = false): string | null {
  if (path === "") return "is empty";
  if (path.startsWith("/")) return "is absolute (starts with `/`)";
  if (path.includes("\0")) return "contains a NUL character";
  if (path.includes("\\")) return "contains a backslash";
  if (CONTROL.test(path)) return "contains a control character";
  if (ENCODER.encode(path).byteLength > MAX_PATH_BYTES) {
    return `is longer than ${MAX_PATH_BYTES} bytes`;
  }
  for (const segment of path.split("/")) {
    if (segment === "") return "has an empty segment (`//` or a trailing `/`)";
    if (segment === "." || segment === "..") return `has a \`${segment}\` segment`;
    if (!fragment && segment.startsWith(".")) {
      return `has a segment starting with \`.\` (\`${segment}\`)`;
    }
    if (ENCODER.encode(segment).byteLength > MAX_SEGMENT_BYTES) {
      return `has a segment longer than ${MAX_SEGMENT_BYTES} bytes`;
    }
  }
  return null;
}

/** A 400 `invalid_storage_path` error. */
export function invalidPath(message: string): GatewayError {
  return new GatewayError(400, "invalid_storage_path", message);
}

/** Throw 400 `invalid_storage_path` unless `path` is acceptable; `what` names its origin. */
export function checkPath(path: string, what: string): string {
  const problem = pathProblem(path);
  if (problem) throw invalidPath(`${what} ${problem}; refused`);
  return path;
}

/**
 * Percent-encode one path segment for a URL: RFC 3986 `pchar` characters stay readable
 * (so timestamps keep their `:`), everything else is encoded.
 */
export function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(
    /%(24|26|2B|2C|3B|3D|3A|40)/g,
    (_, hex: string) => String.fromCharCode(parseInt(hex, 16)),
  );
}

/** Percent-encode a relative path segment by segment. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeSegment).join("/");
}

/** Decode a percent-encoded URL path (400 `invalid_storage_path` on malformed escapes). */
export function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    throw invalidPath("the request path has a malformed percent-escape; refused");
  }
}
