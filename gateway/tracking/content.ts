/**
 * The content of a tracked message at rest: every kept stage in one payload (a JSON header line,
 * then the bodies back to back), encrypted as one age file to the recipient of `[tracking]
 * identity_file`. The identity stays outside the store: a copy of the database alone reveals
 * metadata, never content.
 */
import { Decrypter, Encrypter, identityToRecipient } from "age-encryption";
import type { TrackingStage } from "./types.ts";

/** One stage as captured (before encryption). */
export interface CapturedStage {
  stage: TrackingStage;
  backend?: string;
  method?: string;
  path?: string;
  query?: string;
  status?: number;
  headers: Record<string, string>;
  content_type: string | null;
  size: number;
  truncated: boolean;
  body: Uint8Array;
  /** For `received`: the request's metadata as it arrived (what a replay starts from). */
  metadata?: Record<string, string>;
}

const SECRET_KEY_LINE = /^AGE-SECRET-KEY-1[0-9A-Z]+$/;

/** The key pair of `[tracking] identity_file`. */
export interface TrackingKey {
  identity: string;
  recipient: string;
}

/** Reads an age identity file (`age-keygen` format). Errors name the file, never the key. */
export async function loadTrackingKey(file: string): Promise<TrackingKey> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    throw new Error(`[tracking] identity_file ${file}: cannot read it (${(err as Error).message})`);
  }
  const identity = text.split(/\r?\n/).map((l) => l.trim().toUpperCase())
    .find((l) => SECRET_KEY_LINE.test(l));
  if (!identity) {
    throw new Error(
      `[tracking] identity_file ${file}: no AGE-SECRET-KEY-1… line (make one with ` +
        "`age-keygen -o <file>`)",
    );
  }
  return { identity, recipient: await identityToRecipient(identity) };
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** The stages as one encrypted blob. */
export async function sealStages(
  stages: readonly CapturedStage[],
  recipient: string,
): Promise<Uint8Array> {
  const header = stages.map(({ body, ...rest }) => ({ ...rest, length: body.byteLength }));
  const head = ENCODER.encode(JSON.stringify(header) + "\n");
  let total = head.byteLength;
  for (const s of stages) total += s.body.byteLength;
  const plain = new Uint8Array(total);
  plain.set(head, 0);
  let at = head.byteLength;
  for (const s of stages) {
    plain.set(s.body, at);
    at += s.body.byteLength;
  }
  const e = new Encrypter();
  e.addRecipient(recipient);
  return await e.encrypt(plain);
}

/** The stages of an encrypted blob. Throws when the identity does not open it. */
export async function openStages(sealed: Uint8Array, identity: string): Promise<CapturedStage[]> {
  const d = new Decrypter();
  d.addIdentity(identity);
  const plain = await d.decrypt(sealed);
  const nl = plain.indexOf(10);
  if (nl < 0) throw new Error("the content is not in the tracking format");
  const header = JSON.parse(DECODER.decode(plain.subarray(0, nl))) as (
    & Omit<CapturedStage, "body">
    & { length: number }
  )[];
  let at = nl + 1;
  return header.map(({ length, ...rest }) => {
    const body = plain.slice(at, at + length);
    at += length;
    return { ...rest, body };
  });
}
