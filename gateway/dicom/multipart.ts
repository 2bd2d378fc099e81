/**
 * `multipart/related` bodies (RFC 2387) as DICOMweb uses them: WADO-RS instance responses and
 * STOW-RS requests (`type="application/dicom"`). Binary-safe; parts are views into the body.
 * Decoding uses the codecs' multipart parser (@mjackson/multipart-parser).
 */
import { type MultipartPart, multipartParts } from "../codecs/mod.ts";

/** One part of a multipart body. */
export type Part = MultipartPart;

const ENCODER = new TextEncoder();

/** A random boundary. */
export function newBoundary(): string {
  return `dicom-${crypto.randomUUID()}`;
}

/** The Content-Type of a multipart/related body of `type` parts (`params`: transfer-syntax...). */
export function relatedContentType(
  boundary: string,
  type = "application/dicom",
  params: Record<string, string> = {},
): string {
  const extra = Object.entries(params).map(([k, v]) => `; ${k}=${v}`).join("");
  return `multipart/related; type="${type}"${extra}; boundary=${boundary}`;
}

/** Encode parts (each with its content type) as one multipart/related body. */
export function encodeMultipart(
  parts: { contentType: string; body: Uint8Array; location?: string }[],
  boundary: string,
): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    const location = p.location ? `Content-Location: ${p.location}\r\n` : "";
    chunks.push(
      ENCODER.encode(
        `--${boundary}\r\nContent-Type: ${p.contentType}\r\n${location}` +
          `Content-Length: ${p.body.length}\r\n\r\n`,
      ),
      p.body,
      ENCODER.encode("\r\n"),
    );
  }
  chunks.push(ENCODER.encode(`--${boundary}--\r\n`));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The boundary parameter of a multipart Content-Type, if any. */
export function boundaryOf(contentType: string | null): string | undefined {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? "");
  return m ? (m[1] ?? m[2]) : undefined;
}

/** Split a multipart body into its parts (gateway/codecs' parser); throws on a malformed body. */
export function decodeMultipart(body: Uint8Array, boundary: string): Part[] {
  return multipartParts(body, boundary);
}
