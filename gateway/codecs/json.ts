/** JSON codec: application/json, every `+json` type, and bodies without a Content-Type. */
import { causedError, GatewayError } from "../errors.ts";
import { decodeText } from "./media_type.ts";

/** Deepest JSON nesting accepted when no limit is given (see `max_json_depth`). */
export const DEFAULT_MAX_JSON_DEPTH = 128;

/**
 * Parse a JSON body in the given charset (UTF-8 by default; a BOM is skipped).
 * An empty body is `null`; malformed JSON is a 400 `invalid_json` carrying the parser's reason;
 * nesting deeper than `maxDepth` is a 400 `nesting_too_deep`, found by a linear scan before
 * anything walks the value (every walker after the parser recurses: 100,000 levels would
 * overflow the stack).
 */
export function decodeJson(
  bytes: Uint8Array,
  charset: string | undefined,
  maxDepth = DEFAULT_MAX_JSON_DEPTH,
): unknown {
  if (bytes.byteLength === 0) return null;
  const text = decodeText(bytes, charset);
  const depth = jsonDepthOver(text, maxDepth);
  if (depth >= 0) {
    throw new GatewayError(
      400,
      "nesting_too_deep",
      `JSON nesting depth exceeds max_json_depth of ${maxDepth} (at character ${depth})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw causedError(400, "invalid_json", `malformed JSON body: ${(e as Error).message}`, e);
  }
}

/**
 * The offset at which `text` opens its `maxDepth + 1`-th nested array or object, or -1. Brackets
 * inside strings do not count; malformed text is left to the parser.
 */
export function jsonDepthOver(text: string, maxDepth: number): number {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to the next quote that no backslash escapes.
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return i;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return -1;
}

/** Serialize data as JSON text; data JSON cannot represent is a 500 `unserializable_data`. */
export function encodeJsonText(data: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(data);
  } catch (e) {
    throw new GatewayError(
      500,
      "unserializable_data",
      `body data cannot be serialized as JSON: ${(e as Error).message}`,
    );
  }
  // undefined, functions and symbols have no JSON form: send `null` rather than an empty body.
  return text ?? "null";
}
