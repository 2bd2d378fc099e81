/** The documents of a JMIX 1.0 package, as TypeScript types (see schemas.ts). */

/** `manifest.json`. */
export interface JmixManifest {
  version: "1.0";
  id: string;
  timestamp: string;
  sender: { name: string; id?: string };
  receiver?: { name: string; id?: string };
  security: {
    payload_hash: string;
    signature?: { alg: "EdDSA"; file: "manifest.jws"; key_id?: string };
    encryption?: {
      alg: "ECDH-X25519+HKDF-SHA256+A256GCM";
      ephemeral_public_key: string;
      salt: string;
      iv: string;
      file: "payload.enc";
      key_id?: string;
    };
  };
  extensions?: Record<string, unknown>;
}

/** One audit event of `audit.json`. */
export interface JmixAuditEvent {
  event: string;
  by: string;
  timestamp: string;
  details?: Record<string, unknown>;
}

/** One series of a study in `payload/metadata.json`. */
export interface JmixSeries {
  series_instance_uid: string;
  modality: string | null;
  body_part: string | null;
  instance_count: number;
}

/** One study of `payload/metadata.json`. */
export interface JmixStudy {
  study_instance_uid: string;
  description: string | null;
  series: JmixSeries[];
}

/** `payload/metadata.json`. */
export interface JmixMetadata {
  patient: {
    name: string | null;
    id: string | null;
    birth_date: string | null;
    sex: string | null;
  };
  studies: JmixStudy[];
}

/** One entry of `payload/files.json` (path relative to `payload/`). */
export interface JmixFileEntry {
  path: string;
  size: number;
  sha256: string;
  content_type?: string;
}
