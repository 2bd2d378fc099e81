/**
 * Body codecs: bytes of a content type <-> normalized JSON data.
 *
 * CONTRACT (used by gateway/envelope.ts):
 * - parseMediaType(header) -> { type (lowercased essence), params } | null
 * - formatOf(contentType) -> BodyFormat (a missing Content-Type means JSON)
 * - decodeBody(bytes, contentType, limits) -> normalized data; throws GatewayError (400/413/415)
 * - encodeData(data, contentType) -> { bytes, contentType } used when a middleware changed data
 */
import type { ContentLimits } from "../../shared/gateway_config/types.ts";
import { GatewayError } from "../errors.ts";

/** Normalized body formats. */
export type BodyFormat =
  | "json"
  | "xml"
  | "csv"
  | "form"
  | "multipart"
  | "binary"
  | "text"
  | "none";

/** A parsed media type. */
export interface MediaType {
  type: string;
  params: Record<string, string>;
}

/** Parse a Content-Type header value. */
export function parseMediaType(header: string | null | undefined): MediaType | null {
  if (!header) return null;
  const [essence, ...rest] = header.split(";");
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf("=");
    if (eq < 0) continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    params[p.slice(0, eq).trim().toLowerCase()] = v;
  }
  return { type: essence.trim().toLowerCase(), params };
}

/** The normalized format of a content type. */
export function formatOf(contentType: string | null): BodyFormat {
  const mt = parseMediaType(contentType);
  if (!mt) return "json";
  const t = mt.type;
  if (t === "application/json" || t.endsWith("+json")) return "json";
  return "binary";
}

/** Parse bytes into normalized data. */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string | null,
  _limits: ContentLimits,
): Promise<unknown> {
  const format = formatOf(contentType);
  if (format === "json") {
    try {
      return Promise.resolve(JSON.parse(new TextDecoder().decode(bytes)));
    } catch (e) {
      throw new GatewayError(400, "invalid_json", `malformed JSON body: ${(e as Error).message}`);
    }
  }
  return Promise.resolve(null);
}

/** Serialize normalized data for forwarding. */
export function encodeData(
  data: unknown,
  contentType: string | null,
): { bytes: Uint8Array; contentType: string } {
  const mt = parseMediaType(contentType);
  const keep = mt && (mt.type === "application/json" || mt.type.endsWith("+json"));
  return {
    bytes: new TextEncoder().encode(JSON.stringify(data)),
    contentType: keep ? contentType! : "application/json",
  };
}
