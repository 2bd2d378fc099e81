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
 * overflow the stack). A key repeated in one object is a 400 `duplicate_json_key` (the scan
 * counts the keys written, the parsed value holds fewer when one repeats): JSON.parse keeps the
 * last value while other parsers keep the first, so a check made here on one reading could be
 * bypassed by a server reading the other (RFC 8259 §4, I-JSON RFC 7493 §2.3; FHIR JSON forbids
 * repeats too).
 */
export function decodeJson(
  bytes: Uint8Array,
  charset: string | undefined,
  maxDepth = DEFAULT_MAX_JSON_DEPTH,
): unknown {
  if (bytes.byteLength === 0) return null;
  const text = decodeText(bytes, charset);
  const scan = scanJson(text, maxDepth);
  if ("deeper" in scan) {
    throw new GatewayError(
      400,
      "nesting_too_deep",
      `JSON nesting depth exceeds max_json_depth of ${maxDepth} (at character ${scan.deeper})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw causedError(400, "invalid_json", `malformed JSON body: ${(e as Error).message}`, e);
  }
  // JSON.parse keeps one of two equal keys: fewer keys parsed than written means a repeat.
  if (scan.keys !== 0 && keysIn(value) !== scan.keys) {
    const repeated = firstRepeatedKey(text);
    throw new GatewayError(
      400,
      "duplicate_json_key",
      repeated
        ? `the JSON key ${JSON.stringify(repeated.key.slice(0, 100))} appears twice in one ` +
          `object (at character ${repeated.at})`
        : "a JSON key appears twice in one object",
    );
  }
  return value;
}

/**
 * One linear pass over JSON text, before it is parsed: the offset at which it opens its
 * `maxDepth + 1`-th nested array or object (`deeper`), else the number of object keys it holds
 * (`keys`; compared with the parsed value's, it tells whether a key repeats). Brackets inside
 * strings do not count; malformed text is left to the parser.
 */
export function scanJson(text: string, maxDepth: number): { deeper: number } | { keys: number } {
  let depth = 0;
  let keys = 0;
  let expectKey = false;
  // Per open level: true for an object (where a string after `{` or `,` is a key).
  const inObject: boolean[] = [false];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      if (expectKey) {
        keys++;
        expectKey = false;
      }
      // Skip the string: to the next quote that no backslash escapes.
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return { deeper: i };
      inObject[depth] = expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      expectKey = false;
    } else if (c === 0x2c) {
      expectKey = depth > 0 && inObject[depth];
    }
  }
  return { keys };
}

/** The own keys of every object in a parsed JSON value (as deep as the scan allowed). */
function keysIn(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) n += keysIn(value[i]);
    return n;
  }
  for (const key in value as Record<string, unknown>) {
    n += 1 + keysIn((value as Record<string, unknown>)[key]);
  }
  return n;
}

/**
 * The first key that repeats within one object of well-formed JSON `text`, decoded (so `"a"`
 * and `"\u0061"` are the same), with its offset; null when none does. Only run once the key
 * counts said a key repeats, to name it.
 */
export function firstRepeatedKey(text: string): { key: string; at: number } | null {
  const levels: (Set<string> | null)[] = [null];
  let depth = 0;
  let expectKey = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      const keys = expectKey ? levels[depth] : null;
      expectKey = false;
      if (keys === null) continue;
      const key = JSON.parse(text.slice(start, i + 1)) as string;
      if (keys.has(key)) return { key, at: start };
      keys.add(key);
    } else if (c === 0x7b || c === 0x5b) {
      levels[++depth] = c === 0x7b ? new Set() : null;
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      levels[depth--] = null;
      expectKey = false;
    } else if (c === 0x2c) {
      expectKey = depth > 0 && levels[depth] !== null;
    }
  }
  return null;
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
