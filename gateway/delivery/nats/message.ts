/**
 * One queued message as a JetStream message's payload: `GWN1`, the header's length (u32, big
 * endian), the header (JSON: what the request was, and where its body is when it is not inline),
 * then the body when it is inline. JetStream checks what it stores; the object store checks a body
 * kept there against its digest when it is read.
 */
import type { MessageHeader } from "../message_file.ts";

const MAGIC = new TextEncoder().encode("GWN1");
/** Largest header accepted when a payload is read back. */
const MAX_HEADER_BYTES = 1024 * 1024;

/** Why a message is a dead letter (kept with it in the dead-letter stream). */
export interface DeadNote {
  /** Why (the verdict's reason, or `gave up: …`). */
  reason: string;
  /** Attempts made. */
  attempts: number;
  /** When, ISO 8601. */
  dead_at: string;
  /** The destination's last status. */
  status?: number;
  /** The first 4 KiB of its last answer. */
  answer?: string;
}

/** The header of a message in a stream. */
export interface NatsMessageHeader extends MessageHeader {
  /** Its body is an object of the store's bucket (over `nats_max_payload`), not inline. */
  body_object?: { name: string; size: number };
  /** Set in the dead-letter stream. */
  dead?: DeadNote;
}

/** A payload read back. */
export interface DecodedMessage {
  header: NatsMessageHeader;
  /** The inline body (empty when the body is an object). */
  body: Uint8Array;
}

/** The payload of `header` with an inline `body` (empty for a body kept as an object). */
export function encodeMessage(header: NatsMessageHeader, body: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(MAGIC.length + 4 + head.length + body.length);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(MAGIC.length, head.length);
  out.set(head, MAGIC.length + 4);
  out.set(body, MAGIC.length + 4 + head.length);
  return out;
}

/** Reads a payload back; throws on anything that is not one (it is then a dead letter). */
export function decodeMessage(payload: Uint8Array): DecodedMessage {
  if (payload.length < MAGIC.length + 4 || !MAGIC.every((b, i) => payload[i] === b)) {
    throw new Error("not a queued message (bad magic)");
  }
  const length = new DataView(payload.buffer, payload.byteOffset).getUint32(MAGIC.length);
  if (length > MAX_HEADER_BYTES || MAGIC.length + 4 + length > payload.length) {
    throw new Error("not a queued message (bad header length)");
  }
  const start = MAGIC.length + 4;
  let header: NatsMessageHeader;
  try {
    header = JSON.parse(new TextDecoder().decode(payload.subarray(start, start + length)));
  } catch {
    throw new Error("not a queued message (header is not JSON)");
  }
  if (typeof header?.id !== "string" || typeof header.method !== "string") {
    throw new Error("not a queued message (header incomplete)");
  }
  return { header, body: payload.subarray(start + length) };
}
