/** Binary codec: images, video, audio, PDF, octet-stream and every unknown type. */

/** Metadata of a binary body (the envelope keeps the bytes themselves). */
export interface BinaryMeta {
  /** The media type essence, lowercased, without parameters. */
  content_type: string;
  /** Size in bytes. */
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
}

/** Two hex digits for every byte value. */
const HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, i) => i.toString(16).padStart(2, "0"),
);

/** Lowercase hex SHA-256 of bytes (WebCrypto; a view is hashed in place, not copied). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let out = "";
  for (let i = 0; i < digest.length; i++) out += HEX[digest[i]];
  return out;
}

/** Describe a binary body: `{ content_type, size, sha256 }`. */
export async function describeBinary(bytes: Uint8Array, contentType: string): Promise<BinaryMeta> {
  return { content_type: contentType, size: bytes.byteLength, sha256: await sha256Hex(bytes) };
}
