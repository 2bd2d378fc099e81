/**
 * The content of a tracked message at rest: every kept stage in one payload (a JSON header line,
 * then the bodies back to back), encrypted with AES-256-GCM (the record's id as associated data,
 * so a blob cannot be moved to another record) under a content key; each content key is kept in
 * the store only wrapped with age to the recipient of `[tracking] identity_file`. One age
 * encryption (an X25519 agreement) per key rather than per record keeps the write cost low; the
 * identity stays outside the store, so a copy of the database alone reveals metadata, never
 * content.
 */
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
  const { identityToRecipient } = await import("age-encryption");
  return { identity, recipient: await identityToRecipient(identity) };
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** The stages as one payload (before encryption). */
function payloadOf(stages: readonly CapturedStage[]): Uint8Array {
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
  return plain;
}

/** The stages of a payload. */
function stagesOf(plain: Uint8Array): CapturedStage[] {
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

/** A content key: AES-256-GCM, and the same key wrapped with age for the store. */
export interface ContentKey {
  /** Its row in the store once written (set by the store after its transaction commits). */
  id?: number;
  key: CryptoKey;
  /** The raw key encrypted with age to the tracking recipient. */
  wrapped: Uint8Array;
  /** When it was made (ms), for rotation. */
  created: number;
  /** Records sealed with it. */
  uses: number;
}

/** A new content key, wrapped for `recipient`. */
export async function newContentKey(recipient: string, now: number): Promise<ContentKey> {
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const { Encrypter } = await import("age-encryption");
  const e = new Encrypter();
  e.addRecipient(recipient);
  const wrapped = await e.encrypt(raw);
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
  raw.fill(0);
  return { key, wrapped, created: now, uses: 0 };
}

/** The AES key of a wrapped content key, opened with the age identity. */
export async function unwrapContentKey(wrapped: Uint8Array, identity: string): Promise<CryptoKey> {
  const { Decrypter } = await import("age-encryption");
  const d = new Decrypter();
  d.addIdentity(identity);
  const raw = await d.decrypt(wrapped);
  try {
    return await crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, "AES-GCM", false, [
      "decrypt",
    ]);
  } finally {
    raw.fill(0);
  }
}

/** The stages sealed for record `id`: a 12-byte nonce, then the AES-GCM ciphertext. */
export async function sealStages(
  stages: readonly CapturedStage[],
  key: CryptoKey,
  id: string,
): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: ENCODER.encode(id) },
      key,
      payloadOf(stages) as Uint8Array<ArrayBuffer>,
    ),
  );
  const out = new Uint8Array(12 + sealed.byteLength);
  out.set(iv, 0);
  out.set(sealed, 12);
  return out;
}

/** The stages of record `id`'s sealed content. Throws when the key does not open it. */
export async function openStages(
  sealed: Uint8Array,
  key: CryptoKey,
  id: string,
): Promise<CapturedStage[]> {
  const plain = await crypto.subtle.decrypt(
    {
      name: "AES-GCM",
      iv: sealed.subarray(0, 12) as Uint8Array<ArrayBuffer>,
      additionalData: ENCODER.encode(id),
    },
    key,
    sealed.subarray(12) as Uint8Array<ArrayBuffer>,
  );
  return stagesOf(new Uint8Array(plain));
}
