/** JSON codec: application/json, every `+json` type, and bodies without a Content-Type. */
import { GatewayError } from "../errors.ts";
import { decodeText } from "./media_type.ts";

/**
 * Parse a JSON body in the given charset (UTF-8 by default; a BOM is skipped).
 * An empty body is `null`; malformed JSON is a 400 `invalid_json` carrying the parser's reason.
 */
export function decodeJson(bytes: Uint8Array, charset: string | undefined): unknown {
  if (bytes.byteLength === 0) return null;
  const text = decodeText(bytes, charset);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new GatewayError(400, "invalid_json", `malformed JSON body: ${(e as Error).message}`);
  }
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
