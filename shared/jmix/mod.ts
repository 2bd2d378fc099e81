/**
 * JMIX 1.0 packages: model, JSON Schemas, builder, validator, bounded zip, signing, encryption.
 *
 * @example
 * ```ts
 * import { entryNameProblem, readZip, writeZip } from "./mod.ts";
 *
 * const zip = writeZip(new Map([["manifest.json", new TextEncoder().encode("{}")]]));
 * const files = readZip(zip, { maxEntries: 10, maxUncompressedBytes: 1 << 20 });
 * console.log([...files.keys()]); // [ "manifest.json" ]
 * console.log(entryNameProblem("../etc/passwd")); // why such an entry is refused
 * ```
 *
 * @module
 */
export { type BuildInput, buildPackage, type BuiltPackage, payloadFiles } from "./build.ts";
export {
  b64url,
  decryptPayload,
  ENCRYPTION_ALG,
  encryptPayload,
  fromB64url,
  HKDF_INFO,
  importDecryptionKey,
  importRecipientKey,
  importSigningKey,
  importVerifyKey,
  signManifest,
  verifyManifest,
} from "./crypto.ts";
export { compareBytes, payloadHash, sha256Hex } from "./hash.ts";
export { AUDIT_SCHEMA, FILES_SCHEMA, MANIFEST_SCHEMA, METADATA_SCHEMA } from "./schemas.ts";
export type {
  JmixAuditEvent,
  JmixFileEntry,
  JmixManifest,
  JmixMetadata,
  JmixSeries,
  JmixStudy,
} from "./types.ts";
export { JmixInvalid, schemaProblems, validatePackage, type ValidPackage } from "./validate.ts";
export type { ValidateOptions } from "./validate.ts";
export { crc32, entryNameProblem, looksLikeZip, readZip, writeZip, ZipError } from "./zip.ts";
export type { ZipLimits } from "./zip.ts";
