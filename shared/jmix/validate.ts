/**
 * Validation of a JMIX package zip: bounded zip reading, the allowed entry layout, the JSON
 * Schemas of manifest, audit, metadata and file list, the file list against the payload entries,
 * the payload hash, the signature and (with a key) the encrypted payload.
 */
import { decryptPayload, verifyManifest } from "./crypto.ts";
import { payloadHash, sha256Hex } from "./hash.ts";
import { AUDIT_SCHEMA, FILES_SCHEMA, MANIFEST_SCHEMA, METADATA_SCHEMA } from "./schemas.ts";
import type { JmixFileEntry, JmixManifest, JmixMetadata } from "./types.ts";
import { readZip, ZipError, type ZipLimits } from "./zip.ts";

/** A package that is not valid; `problems` says why (one line each). */
export class JmixInvalid extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid JMIX package: ${problems.join("; ")}`);
    this.name = "JmixInvalid";
    this.problems = problems;
  }
}

/** Keys and policies of a validation. */
export interface ValidateOptions {
  limits: ZipLimits;
  /** Ed25519 public keys `manifest.jws` must verify with (when present). */
  verifyKeys?: CryptoKey[];
  /** Refuse packages without `manifest.jws`. */
  requireSignature?: boolean;
  /** X25519 private key: encrypted payloads are decrypted and checked like plain ones. */
  decryptionKey?: CryptoKey;
}

/** A validated package. */
export interface ValidPackage {
  manifest: JmixManifest;
  /** The metadata; absent for an encrypted package that could not be decrypted (no key). */
  metadata?: JmixMetadata;
  entries: Map<string, Uint8Array>;
}

/** The four documents with a JSON Schema. */
export type SchemaDocument =
  | "manifest.json"
  | "audit.json"
  | "payload/metadata.json"
  | "payload/files.json";

type SchemaValidator = ((value: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string }[] | null;
};

// Ajv and the four compiled schemas cost about 0.1 s of CPU: they are made on the first package
// validated, not when the gateway (or any isolate or test that imports it) loads.
let validators: Promise<Record<SchemaDocument, SchemaValidator>> | undefined;

function schemaValidators(): Promise<Record<SchemaDocument, SchemaValidator>> {
  return validators ??= (async () => {
    const { default: Ajv2020 } = await import("ajv/dist/2020.js");
    // deno-lint-ignore no-explicit-any
    const ajv = new (Ajv2020 as any)({ allErrors: true, strict: false });
    ajv.addFormat("date-time", {
      type: "string",
      validate: (v: string) =>
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) &&
        !Number.isNaN(Date.parse(v)),
    });
    ajv.addFormat(
      "uuid",
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    );
    return {
      "manifest.json": ajv.compile(MANIFEST_SCHEMA),
      "audit.json": ajv.compile(AUDIT_SCHEMA),
      "payload/metadata.json": ajv.compile(METADATA_SCHEMA),
      "payload/files.json": ajv.compile(FILES_SCHEMA),
    };
  })();
}

/** Schema problems of one document (`<file><pointer>: <message>`). */
export async function schemaProblems(file: SchemaDocument, value: unknown): Promise<string[]> {
  const validate = (await schemaValidators())[file];
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${file}${e.instancePath}: ${e.message}`);
}

function parseJson(entries: Map<string, Uint8Array>, name: string, problems: string[]): unknown {
  const bytes = entries.get(name);
  if (!bytes) {
    problems.push(`${name} is missing`);
    return undefined;
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    problems.push(`${name} is not UTF-8 JSON`);
    return undefined;
  }
}

const TOP_LEVEL = new Set(["manifest.json", "audit.json", "manifest.jws", "payload.enc"]);

/** Check payload files (relative to `payload/`) against files.json, metadata and the hash. */
async function checkPayload(
  payload: Map<string, Uint8Array>,
  manifest: JmixManifest,
  problems: string[],
): Promise<JmixMetadata | undefined> {
  const doc = new Map([...payload].map(([k, v]) => [`payload/${k}`, v]));
  const metadata = parseJson(doc, "payload/metadata.json", problems);
  const files = parseJson(doc, "payload/files.json", problems);
  if (metadata !== undefined) {
    problems.push(...await schemaProblems("payload/metadata.json", metadata));
  }
  if (files !== undefined) problems.push(...await schemaProblems("payload/files.json", files));
  for (const path of payload.keys()) {
    if (path !== "metadata.json" && path !== "files.json" && !/^(dicom|files)\//.test(path)) {
      problems.push(`payload/${path} is outside payload/dicom/ and payload/files/`);
    }
  }
  if (problems.length) return undefined;
  const listed = new Set<string>();
  for (const f of files as JmixFileEntry[]) {
    listed.add(f.path);
    const bytes = payload.get(f.path);
    if (!bytes) problems.push(`files.json lists ${f.path}, which is not in the package`);
    else if (bytes.length !== f.size) problems.push(`payload/${f.path} is not ${f.size} bytes`);
    else if (await sha256Hex(bytes) !== f.sha256) {
      problems.push(`payload/${f.path} does not match its sha256`);
    }
  }
  for (const path of payload.keys()) {
    if (/^(dicom|files)\//.test(path) && !listed.has(path)) {
      problems.push(`payload/${path} is not listed in files.json`);
    }
  }
  const hash = await payloadHash(payload);
  if (hash !== manifest.security.payload_hash) {
    problems.push(
      `payload_hash is ${manifest.security.payload_hash}, the payload hashes to ${hash}`,
    );
  }
  return metadata as JmixMetadata;
}

/** Validate a package zip; throws ZipError (not a zip, unsafe, too large) or JmixInvalid. */
export async function validatePackage(
  zip: Uint8Array,
  opts: ValidateOptions,
): Promise<ValidPackage> {
  const entries = readZip(zip, opts.limits);
  const problems: string[] = [];
  for (const name of entries.keys()) {
    if (!TOP_LEVEL.has(name) && !name.startsWith("payload/")) {
      problems.push(`unexpected entry ${name}`);
    }
  }
  const manifest = parseJson(entries, "manifest.json", problems) as JmixManifest | undefined;
  const audit = parseJson(entries, "audit.json", problems);
  if (manifest !== undefined) problems.push(...await schemaProblems("manifest.json", manifest));
  if (audit !== undefined) problems.push(...await schemaProblems("audit.json", audit));
  if (problems.length) throw new JmixInvalid(problems);
  const m = manifest!;

  const jws = entries.get("manifest.jws");
  if (jws && !m.security.signature) {
    problems.push("manifest.jws present but security.signature is not");
  }
  if (!jws && m.security.signature) {
    problems.push("security.signature set but manifest.jws is missing");
  }
  if (!jws && opts.requireSignature) problems.push("a signed package (manifest.jws) is required");
  if (jws && opts.verifyKeys?.length) {
    const p = await verifyManifest(
      new TextDecoder().decode(jws),
      entries.get("manifest.json")!,
      opts.verifyKeys,
    );
    if (p) problems.push(p);
  }

  const payload = new Map<string, Uint8Array>();
  for (const [name, bytes] of entries) {
    if (name.startsWith("payload/")) payload.set(name.slice("payload/".length), bytes);
  }
  let metadata: JmixMetadata | undefined;
  const enc = m.security.encryption;
  if (enc) {
    const ct = entries.get("payload.enc");
    if (!ct) problems.push("security.encryption set but payload.enc is missing");
    if (payload.size) problems.push("an encrypted package must not carry payload/ entries");
    if (ct && opts.decryptionKey && !problems.length) {
      let plain: Uint8Array | undefined;
      try {
        plain = await decryptPayload(ct, enc, opts.decryptionKey, m.id);
      } catch {
        problems.push("payload.enc does not decrypt with the configured key");
      }
      if (plain) {
        let inner: Map<string, Uint8Array> | undefined;
        try {
          inner = readZip(plain, opts.limits);
        } catch (err) {
          problems.push(`decrypted payload: ${(err as ZipError).message}`);
        }
        if (inner) metadata = await checkPayload(inner, m, problems);
      }
    }
  } else {
    if (entries.has("payload.enc")) {
      problems.push("payload.enc present but the manifest has no encryption");
    }
    metadata = await checkPayload(payload, m, problems);
  }
  if (problems.length) throw new JmixInvalid(problems);
  return { manifest: m, metadata, entries };
}
