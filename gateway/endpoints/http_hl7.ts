/**
 * The HTTP bridge's routing metadata: an HL7 v2 message posted to an HTTP endpoint
 * (`x-application/hl7-v2+er7`, `application/hl7-v2`, or `text/plain` starting with MSH) gets the
 * `hl7.*` metadata an `hl7` endpoint gives its messages (`hl7.message_type`, `hl7.trigger_event`,
 * `hl7.control_id`, `hl7.sending_facility`…), so `match` can route it. A declared HL7 body is read
 * whole for it (within max_body_size); a `text/plain` one only when it is already in memory (up to
 * 64 KiB), so large text keeps streaming.
 */
import { formatOf, hl7HeaderOfBody, hl7Metadata, parseMediaType } from "../codecs/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";

/** True when the request may carry an HL7 message (a cheap check on the hot path). */
export function mayBeHl7(env: RequestEnvelope): boolean {
  const type = env.body.contentType;
  if (type === null || env.body.isEmpty) return false;
  const format = formatOf(type);
  return format === "hl7" || (format === "text" && !env.body.streaming);
}

/** Add the `hl7.*` metadata of the request's message (400 `invalid_hl7` for a broken header). */
export async function addHl7Metadata(env: RequestEnvelope): Promise<void> {
  const mt = parseMediaType(env.body.contentType);
  if (mt === null) return;
  if (formatOf(mt.type) !== "hl7" && mt.type !== "text/plain") return;
  const header = hl7HeaderOfBody(await env.body.bytes(), mt.type, mt.params.charset);
  if (header !== null) Object.assign(env.metadata, hl7Metadata(header));
}
