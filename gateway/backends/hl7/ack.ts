/**
 * The receiver's ACK as the backend's answer: `AA`/`CA` is a 200 whose body is the ACK; `AE`/`CE`
 * (an error) and `AR`/`CR` (a reject) are 502 GatewayErrors carrying the ERR text, and in
 * `details` the ACK itself, so that an `hl7` endpoint can pass it on to its sender.
 */
import { type AckCode, readAck } from "../../codecs/mod.ts";
import { Body, ResponseEnvelope } from "../../envelope.ts";
import { causedError, GatewayError } from "../../errors.ts";

/** The media type of ER7 bodies. */
export const ER7_MEDIA_TYPE = "x-application/hl7-v2+er7";

/** What a parsed ACK says, for matching it to the message sent. */
export interface ReadAck {
  /** MSA-1. */
  code: AckCode;
  /** MSA-2: the control id of the message acknowledged. */
  controlId: string;
  /** The ACK's text. */
  text: string;
  /** The whole parse. */
  ack: ReturnType<typeof readAck>;
}

/** Parses an ACK frame's text; a 502 `hl7_bad_ack` when it is no ACK. */
export function parseAck(text: string, peer: string): ReadAck {
  try {
    const ack = readAck(text);
    return { code: ack.code, controlId: ack.controlId, text, ack };
  } catch (err) {
    throw causedError(
      502,
      "hl7_bad_ack",
      `${peer} answered with no valid ACK: ${(err as Error).message}`,
      err,
    );
  }
}

/** The response (AA/CA) or error (the others) of an ACK. */
export function answerOfAck(read: ReadAck, peer: string, backend: string): ResponseEnvelope {
  const { code, controlId, text, ack } = read;
  if (code === "AA" || code === "CA") {
    const res = new ResponseEnvelope(
      200,
      new Headers({
        "content-type": ER7_MEDIA_TYPE,
        "x-hl7-ack-code": code,
        "x-hl7-control-id": controlId,
      }),
      new Body(new TextEncoder().encode(text), ER7_MEDIA_TYPE),
      backend,
    );
    return res;
  }
  const reject = code === "AR" || code === "CR";
  const why = ack.errors.map((e) => e.text).filter((t) => t !== "").join("; ") || ack.text;
  const kind = reject ? "rejected" : "refused with an error";
  throw new GatewayError(
    502,
    reject ? "hl7_ack_reject" : "hl7_ack_error",
    `${peer} ${kind} message ${controlId || "(no control id)"} (${code})${why ? `: ${why}` : ""}`,
    { ack_code: code, control_id: controlId, ack: text, errors: ack.errors },
  );
}
