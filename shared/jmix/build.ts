/** Build a JMIX 1.0 package (a zip) from metadata and payload files. */
import { ENCRYPTION_ALG, encryptPayload, signManifest } from "./crypto.ts";
import { compareBytes, payloadHash, sha256Hex } from "./hash.ts";
import type { JmixAuditEvent, JmixFileEntry, JmixManifest, JmixMetadata } from "./types.ts";
import { writeZip } from "./zip.ts";

const ENCODER = new TextEncoder();

/** What a package is built from. */
export interface BuildInput {
  metadata: JmixMetadata;
  /** DICOM files by name (stored as `payload/dicom/<name>`). */
  dicom: Map<string, Uint8Array>;
  /** Other files by name (stored as `payload/files/<name>`). */
  files?: Map<string, Uint8Array>;
  sender: { name: string; id?: string };
  receiver?: { name: string; id?: string };
  /** Package id (default a random UUID). */
  id?: string;
  now?: Date;
  /** Sign the manifest (`manifest.jws`). */
  signing?: { key: CryptoKey; keyId?: string };
  /** Encrypt the payload for this X25519 public key (`payload.enc`). */
  encryptFor?: { key: CryptoKey; keyId?: string };
  /** Extra audit events after `created`. */
  audit?: JmixAuditEvent[];
}

/** A built package. */
export interface BuiltPackage {
  id: string;
  manifest: JmixManifest;
  /** The exact bytes of `manifest.json` in the zip. */
  manifestBytes: Uint8Array;
  zip: Uint8Array;
}

function json(value: unknown): Uint8Array {
  return ENCODER.encode(JSON.stringify(value, null, 2) + "\n");
}

/** The payload files (paths relative to `payload/`): metadata, file list, DICOM and other files. */
export async function payloadFiles(input: BuildInput): Promise<Map<string, Uint8Array>> {
  const data = new Map<string, Uint8Array>();
  for (const [name, bytes] of input.dicom) data.set(`dicom/${name}`, bytes);
  for (const [name, bytes] of input.files ?? []) data.set(`files/${name}`, bytes);
  const list: JmixFileEntry[] = [];
  for (const path of [...data.keys()].sort(compareBytes)) {
    const bytes = data.get(path)!;
    list.push({
      path,
      size: bytes.length,
      sha256: await sha256Hex(bytes),
      content_type: path.startsWith("dicom/") ? "application/dicom" : "application/octet-stream",
    });
  }
  const out = new Map<string, Uint8Array>([
    ["metadata.json", json(input.metadata)],
    ["files.json", json(list)],
  ]);
  for (const [path, bytes] of data) out.set(path, bytes);
  return out;
}

/** Build the package: manifest, audit, payload (plain or encrypted), optional signature. */
export async function buildPackage(input: BuildInput): Promise<BuiltPackage> {
  const id = input.id ?? crypto.randomUUID();
  const timestamp = (input.now ?? new Date()).toISOString();
  const payload = await payloadFiles(input);
  const manifest: JmixManifest = {
    version: "1.0",
    id,
    timestamp,
    sender: input.sender,
    ...(input.receiver ? { receiver: input.receiver } : {}),
    security: { payload_hash: await payloadHash(payload) },
  };
  const entries = new Map<string, Uint8Array>();
  if (input.encryptFor) {
    const { ciphertext, params } = await encryptPayload(
      writeZip(payload),
      input.encryptFor.key,
      id,
    );
    manifest.security.encryption = {
      alg: ENCRYPTION_ALG,
      ...params,
      file: "payload.enc",
      ...(input.encryptFor.keyId ? { key_id: input.encryptFor.keyId } : {}),
    };
    entries.set("payload.enc", ciphertext);
  } else {
    for (const [path, bytes] of payload) entries.set(`payload/${path}`, bytes);
  }
  if (input.signing) {
    manifest.security.signature = {
      alg: "EdDSA",
      file: "manifest.jws",
      ...(input.signing.keyId ? { key_id: input.signing.keyId } : {}),
    };
  }
  const manifestBytes = json(manifest);
  entries.set("manifest.json", manifestBytes);
  const audit: JmixAuditEvent[] = [
    { event: "created", by: input.sender.name, timestamp },
    ...(input.audit ?? []),
  ];
  entries.set("audit.json", json({ audit }));
  if (input.signing) {
    const jws = await signManifest(manifestBytes, input.signing.key, input.signing.keyId);
    entries.set("manifest.jws", ENCODER.encode(jws));
  }
  return { id, manifest, manifestBytes, zip: writeZip(entries) };
}
