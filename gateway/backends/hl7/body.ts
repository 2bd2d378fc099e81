/**
 * The bytes an `hl7` backend sends for a request: an ER7 body as it came (from an `hl7` endpoint
 * or the HTTP bridge; its bytes untouched, whatever their charset), or, when a middleware turned
 * the body into the codec's JSON, that JSON written back as ER7. Anything else is a 4xx naming
 * what was found, since the receiver could not read it.
 */
import { type Hl7Header, readFirstHl7Header } from "../../codecs/mod.ts";
import { formatHl7, looksLikeHl7Json } from "../../codecs/hl7/mod.ts";
import type { RequestEnvelope } from "../../envelope.ts";
import { causedError, GatewayError } from "../../errors.ts";

/** The media types whose body is ER7 text. */
const ER7_TYPES = new Set(["x-application/hl7-v2+er7", "application/hl7-v2"]);

/** A message ready to send. */
export interface OutgoingMessage {
  /** The ER7 bytes (no MLLP framing). */
  bytes: Uint8Array;
  /** Its MSH (a batch's first MSH). */
  header: Hl7Header;
  /** The control id its ACK names: MSH-10, or "" for a batch (FHS/BHS), whose ACK may name any. */
  controlId: string;
}

/** The message of `req`'s body, or a 4xx GatewayError. */
export async function outgoingMessage(
  req: RequestEnvelope,
  maxBytes: number,
): Promise<OutgoingMessage> {
  const body = req.body;
  const mediaType = (body.contentType ?? "").split(";")[0].trim().toLowerCase();
  let bytes: Uint8Array;
  if (body.isEmpty) {
    throw new GatewayError(
      400,
      "invalid_hl7",
      "the hl7 backend needs an HL7 v2 message: the body is empty",
    );
  } else if (ER7_TYPES.has(mediaType) || mediaType === "text/plain") {
    bytes = await body.bytes();
  } else if (body.format === "json") {
    const data = await body.data();
    if (!looksLikeHl7Json(data)) {
      throw new GatewayError(
        400,
        "invalid_hl7",
        "the hl7 backend sends HL7 v2: this JSON body is not the HL7 codec's message shape " +
          "(an object with `segments.MSH`, or `batches`; docs/hl7.md)",
      );
    }
    let text: string;
    try {
      text = formatHl7(data);
    } catch (err) {
      throw causedError(
        400,
        "invalid_hl7",
        `the HL7 JSON body cannot be written as ER7: ${(err as Error).message}`,
        err,
      );
    }
    bytes = new TextEncoder().encode(text);
  } else {
    throw new GatewayError(
      415,
      "unsupported_media_type",
      `the hl7 backend sends HL7 v2 ER7 (x-application/hl7-v2+er7) or the HL7 codec's JSON; ` +
        `the body is ${mediaType || "of no content type"}`,
    );
  }
  if (bytes.byteLength > maxBytes) {
    throw new GatewayError(
      413,
      "payload_too_large",
      `the HL7 message has ${bytes.byteLength} bytes, over the backend's max_message_bytes of ${maxBytes}`,
    );
  }
  const { header, batch } = headerOf(bytes);
  return { bytes, header, controlId: batch ? "" : header.controlId };
}

/** The MSH of the message (its first segment; a batch's first MSH), and whether it is a batch. */
function headerOf(bytes: Uint8Array): { header: Hl7Header; batch: boolean } {
  // The header is ASCII in practice; decoding only the head keeps a large message unread.
  const head = new TextDecoder().decode(bytes.subarray(0, Math.min(bytes.byteLength, 64 * 1024)))
    .replace(/^[\uFEFF\s]+/, "");
  const batch = head.startsWith("FHS") || head.startsWith("BHS");
  try {
    return { header: readFirstHl7Header(head), batch };
  } catch (err) {
    throw causedError(
      400,
      "invalid_hl7",
      `the body is not an HL7 v2 message: ${(err as Error).message}`,
      err,
    );
  }
}
