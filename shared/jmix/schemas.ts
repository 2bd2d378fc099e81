/** JSON Schemas (draft 2020-12) of the JSON documents of a JMIX 1.0 package. */

const UID = { type: "string", pattern: "^[0-9]+(\\.[0-9]+)*$", maxLength: 64 };
const TIMESTAMP = { type: "string", format: "date-time" };
const B64URL = { type: "string", pattern: "^[A-Za-z0-9_-]+$" };
const PAYLOAD_PATH = {
  type: "string",
  pattern: "^(dicom|files)/[^/\\\\]+(/[^/\\\\]+)*$",
  maxLength: 900,
};

/** `manifest.json`. */
export const MANIFEST_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://jmix.example/schemas/1.0/manifest.json",
  type: "object",
  required: ["version", "id", "timestamp", "sender", "security"],
  additionalProperties: false,
  properties: {
    version: { const: "1.0" },
    id: { type: "string", format: "uuid" },
    timestamp: TIMESTAMP,
    sender: {
      type: "object",
      required: ["name"],
      properties: { name: { type: "string", minLength: 1 }, id: { type: "string" } },
    },
    receiver: {
      type: "object",
      required: ["name"],
      properties: { name: { type: "string", minLength: 1 }, id: { type: "string" } },
    },
    security: {
      type: "object",
      required: ["payload_hash"],
      additionalProperties: false,
      properties: {
        payload_hash: { type: "string", pattern: "^sha256:[0-9a-f]{64}$" },
        signature: {
          type: "object",
          required: ["alg", "file"],
          additionalProperties: false,
          properties: {
            alg: { const: "EdDSA" },
            file: { const: "manifest.jws" },
            key_id: { type: "string" },
          },
        },
        encryption: {
          type: "object",
          required: ["alg", "ephemeral_public_key", "salt", "iv", "file"],
          additionalProperties: false,
          properties: {
            alg: { const: "ECDH-X25519+HKDF-SHA256+A256GCM" },
            ephemeral_public_key: B64URL,
            salt: B64URL,
            iv: B64URL,
            file: { const: "payload.enc" },
            key_id: { type: "string" },
          },
        },
      },
    },
    extensions: { type: "object" },
  },
} as const;

/** `audit.json`. */
export const AUDIT_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://jmix.example/schemas/1.0/audit.json",
  type: "object",
  required: ["audit"],
  properties: {
    audit: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        required: ["event", "by", "timestamp"],
        properties: {
          event: { type: "string", minLength: 1 },
          by: { type: "string", minLength: 1 },
          timestamp: TIMESTAMP,
          details: { type: "object" },
        },
      },
    },
  },
} as const;

const SERIES = {
  type: "object",
  required: ["series_instance_uid", "instance_count"],
  properties: {
    series_instance_uid: UID,
    modality: { type: ["string", "null"] },
    body_part: { type: ["string", "null"] },
    instance_count: { type: "integer", minimum: 1 },
  },
};

/** `payload/metadata.json`. */
export const METADATA_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://jmix.example/schemas/1.0/metadata.json",
  type: "object",
  required: ["patient", "studies"],
  properties: {
    patient: {
      type: "object",
      properties: {
        name: { type: ["string", "null"] },
        id: { type: ["string", "null"] },
        birth_date: { type: ["string", "null"], pattern: "^[0-9]{8}$" },
        sex: { type: ["string", "null"] },
      },
    },
    studies: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        required: ["study_instance_uid", "series"],
        properties: {
          study_instance_uid: UID,
          description: { type: ["string", "null"] },
          series: { type: "array", items: SERIES },
        },
      },
    },
  },
} as const;

/** `payload/files.json`. */
export const FILES_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "https://jmix.example/schemas/1.0/files.json",
  type: "array",
  items: {
    type: "object",
    required: ["path", "size", "sha256"],
    additionalProperties: false,
    properties: {
      path: PAYLOAD_PATH,
      size: { type: "integer", minimum: 0 },
      sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
      content_type: { type: "string" },
    },
  },
} as const;
