/**
 * `multipart/related` bodies (RFC 2387) as DICOMweb uses them: WADO-RS instance responses and
 * STOW-RS requests (`type="application/dicom"`). Binary-safe; parts are views into the body.
 */

/** One part of a multipart body. */
export interface Part {
  headers: Headers;
  body: Uint8Array;
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

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

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  const last = haystack.length - needle.length;
  outer: for (let i = haystack.indexOf(first, from); i !== -1 && i <= last;) {
    for (let j = 1; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) {
        i = haystack.indexOf(first, i + 1);
        continue outer;
      }
    }
    return i;
  }
  return -1;
}

/** The boundary parameter of a multipart Content-Type, if any. */
export function boundaryOf(contentType: string | null): string | undefined {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? "");
  return m ? (m[1] ?? m[2]) : undefined;
}

/** Split a multipart body into its parts; throws on a body without the boundary. */
export function decodeMultipart(body: Uint8Array, boundary: string): Part[] {
  const delimiter = ENCODER.encode(`--${boundary}`);
  const parts: Part[] = [];
  let at = indexOf(body, delimiter, 0);
  if (at < 0) throw new Error("multipart body does not contain its boundary");
  while (at >= 0) {
    let start = at + delimiter.length;
    if (body[start] === 0x2d && body[start + 1] === 0x2d) break; // closing `--`
    if (body[start] === 0x0d && body[start + 1] === 0x0a) start += 2;
    const next = indexOf(body, ENCODER.encode(`\r\n--${boundary}`), start);
    if (next < 0) throw new Error("multipart body is truncated (no closing boundary)");
    const part = body.subarray(start, next);
    // No header lines: the part starts with the empty line itself.
    const bare = part[0] === 0x0d && part[1] === 0x0a;
    const split = bare ? -2 : indexOf(part, ENCODER.encode("\r\n\r\n"), 0);
    const headerText = split < 0 ? "" : DECODER.decode(part.subarray(0, split));
    const headers = new Headers();
    for (const line of headerText.split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    const bodyStart = bare ? 2 : split < 0 ? 0 : split + 4;
    parts.push({ headers, body: part.subarray(bodyStart) });
    at = next + 2;
  }
  return parts;
}
