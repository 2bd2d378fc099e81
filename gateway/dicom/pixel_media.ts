/**
 * Media types of frames and bulk data (PS3.18 8.7.3) and the Accept negotiation of the WADO-RS
 * frames and bulk data routes. The gateway does not transcode: it offers the data as stored, so
 * negotiation only decides whether that representation is acceptable and how it is labelled.
 *
 * - Native (uncompressed) data is `application/octet-stream; transfer-syntax=1.2.840.10008.1.2.1`.
 * - Encapsulated data is the media type of its transfer syntax (`image/jpeg`, `image/jls`,
 *   `image/jp2`, `image/jpx`, `image/jphc`, `image/dicom-rle`, `video/mpeg`, `video/mp4`,
 *   `video/H265`) with its `transfer-syntax`; `application/octet-stream` is acceptable for it only
 *   with `transfer-syntax=*` or that exact syntax.
 * - A range without `transfer-syntax` accepts any syntax of its media type; `transfer-syntax=*`
 *   accepts any syntax.
 * - `multipart/related; type="..."` (type absent: any) answers a multipart body; a bare media type
 *   answers a single part and is acceptable only when there is exactly one part to send.
 * - No Accept header is `*` / `*`: the data as stored, in a multipart body.
 */
import { parseMediaType } from "../codecs/mod.ts";
import { TS } from "./uids.ts";

/** The media type for native (uncompressed) frames and bulk data. */
export const OCTET_STREAM = "application/octet-stream";

const COMPRESSED_TYPES: Readonly<Record<string, string>> = {
  "1.2.840.10008.1.2.4.50": "image/jpeg",
  "1.2.840.10008.1.2.4.51": "image/jpeg",
  "1.2.840.10008.1.2.4.57": "image/jpeg",
  "1.2.840.10008.1.2.4.70": "image/jpeg",
  "1.2.840.10008.1.2.4.80": "image/jls",
  "1.2.840.10008.1.2.4.81": "image/jls",
  "1.2.840.10008.1.2.4.90": "image/jp2",
  "1.2.840.10008.1.2.4.91": "image/jp2",
  "1.2.840.10008.1.2.4.92": "image/jpx",
  "1.2.840.10008.1.2.4.93": "image/jpx",
  "1.2.840.10008.1.2.4.201": "image/jphc",
  "1.2.840.10008.1.2.4.202": "image/jphc",
  "1.2.840.10008.1.2.4.203": "image/jphc",
  "1.2.840.10008.1.2.5": "image/dicom-rle",
  "1.2.840.10008.1.2.4.100": "video/mpeg",
  "1.2.840.10008.1.2.4.101": "video/mpeg",
  "1.2.840.10008.1.2.4.102": "video/mp4",
  "1.2.840.10008.1.2.4.103": "video/mp4",
  "1.2.840.10008.1.2.4.104": "video/mp4",
  "1.2.840.10008.1.2.4.105": "video/mp4",
  "1.2.840.10008.1.2.4.106": "video/mp4",
  "1.2.840.10008.1.2.4.107": "video/H265",
  "1.2.840.10008.1.2.4.108": "video/H265",
};

/** What the gateway can send: data in one transfer syntax. */
export interface PixelOffer {
  /** Media type of the data (see the module comment). */
  type: string;
  /** Transfer syntax the data is in (native: Explicit VR Little Endian). */
  transferSyntax: string;
  /** True for compressed (encapsulated) data. */
  encapsulated: boolean;
}

/** The representation chosen for a response. */
export interface Representation {
  /** Media type of each part (or of the single body). */
  type: string;
  transferSyntax: string;
  /** True: one bare body; false: a multipart/related body. */
  single: boolean;
}

/** The offer for data stored in `transferSyntax` (`encapsulated` as the pixel data is). */
export function offerOf(transferSyntax: string, encapsulated: boolean): PixelOffer {
  if (!encapsulated) return { type: OCTET_STREAM, transferSyntax: TS.explicitLE, encapsulated };
  return { type: COMPRESSED_TYPES[transferSyntax] ?? OCTET_STREAM, transferSyntax, encapsulated };
}

/** The Content-Type of one part (or a single body). */
export function partContentType(r: Representation): string {
  return `${r.type}; transfer-syntax=${r.transferSyntax}`;
}

/** Split an Accept header at commas outside quoted strings. */
function ranges(accept: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < accept.length; i++) {
    const c = accept[i];
    if (c === '"' && accept[i - 1] !== "\\") quoted = !quoted;
    else if (c === "," && !quoted) {
      out.push(accept.slice(start, i));
      start = i + 1;
    }
  }
  out.push(accept.slice(start));
  return out.map((r) => r.trim()).filter((r) => r !== "");
}

/** A media range of the inner data type against the offer; the representation's type or none. */
function matchType(range: string, ts: string | undefined, offer: PixelOffer): string | undefined {
  if (ts !== undefined && ts !== "*" && ts !== offer.transferSyntax) return undefined;
  if (range === "*/*" || range === "*" || range === "") return offer.type;
  if (range === offer.type.toLowerCase()) return offer.type;
  if (range.endsWith("/*") && offer.type.toLowerCase().startsWith(range.slice(0, -1))) {
    return offer.type;
  }
  // Compressed data labelled as octet-stream, when the client names the syntax (or any).
  if (range === OCTET_STREAM && offer.encapsulated && ts !== undefined) return OCTET_STREAM;
  return undefined;
}

/**
 * Choose how to send `parts` part(s) of `offer` for an Accept header (null: none sent); undefined
 * when no acceptable representation exists (406).
 */
export function negotiate(
  accept: string | null,
  offer: PixelOffer,
  parts: number,
): Representation | undefined {
  const candidates = ranges(accept ?? "*/*").map((text, order) => {
    const mt = parseMediaType(text);
    const q = Number(mt?.params.q ?? "1");
    return { mt, q: Number.isFinite(q) ? q : 0, order };
  }).filter((c) => c.mt !== null && c.q > 0)
    .sort((a, b) => b.q - a.q || a.order - b.order);
  for (const { mt } of candidates) {
    const { type, params } = mt!;
    const ts = params["transfer-syntax"]?.trim();
    if (type === "multipart/related" || type === "multipart/*" || type === "*/*") {
      const inner = type === "*/*" ? "*/*" : (params.type ?? "*/*").trim().toLowerCase();
      const chosen = matchType(inner, ts, offer);
      if (chosen) return { type: chosen, transferSyntax: offer.transferSyntax, single: false };
    } else if (parts === 1) {
      const chosen = matchType(type, ts, offer);
      if (chosen) return { type: chosen, transferSyntax: offer.transferSyntax, single: true };
    }
  }
  return undefined;
}

/** Every kind of data the gateway may hold, for checks made before the data is there. */
const ALL_OFFERS: readonly PixelOffer[] = [
  offerOf(TS.explicitLE, false),
  ...Object.keys(COMPRESSED_TYPES).map((ts) => offerOf(ts, true)),
];

/** True when some stored data could be sent for this Accept header (else 406 at once). */
export function mayAccept(accept: string | null, parts: number): boolean {
  return ALL_OFFERS.some((o) => negotiate(accept, o, parts) !== undefined);
}

/** What can be sent, for a 406 message. */
export function describeOffer(offer: PixelOffer): string {
  return `${offer.type}; transfer-syntax=${offer.transferSyntax} (the gateway does not transcode)`;
}
