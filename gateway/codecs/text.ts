/** Text codec: text/plain and every other text/* type without a codec of its own. */
import { decodeText } from "./media_type.ts";

/** Decode a text body to a string in its charset (UTF-8 by default). */
export function decodeTextBody(bytes: Uint8Array, charset: string | undefined): string {
  return decodeText(bytes, charset);
}
