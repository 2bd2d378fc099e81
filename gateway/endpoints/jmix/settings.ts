/** The options of a `jmix` endpoint, with defaults, and its keys imported on first use. */
import {
  importDecryptionKey,
  importRecipientKey,
  importSigningKey,
  importVerifyKey,
  type ZipLimits,
} from "../../../shared/jmix/mod.ts";

/** Defaults of the size options. */
export const JMIX_DEFAULTS = {
  max_package_bytes: 104_857_600,
  max_uncompressed_bytes: 1_073_741_824,
  max_entries: 10_000,
  sender_name: "gateway",
};

/** Imported keys of an endpoint. */
export interface JmixKeys {
  signing?: { key: CryptoKey; keyId?: string };
  verify: CryptoKey[];
  encryptFor?: { key: CryptoKey; keyId?: string };
  decryption?: CryptoKey;
}

/** Resolved settings of a `jmix` endpoint. */
export class JmixSettings {
  readonly maxPackageBytes: number;
  readonly limits: ZipLimits;
  readonly senderName: string;
  readonly requireSignature: boolean;
  readonly #o: Record<string, unknown>;
  #keys: Promise<JmixKeys> | undefined;

  constructor(options: Record<string, unknown>) {
    this.#o = options;
    this.maxPackageBytes = Number(options.max_package_bytes ?? JMIX_DEFAULTS.max_package_bytes);
    this.limits = {
      maxEntries: Number(options.max_entries ?? JMIX_DEFAULTS.max_entries),
      maxUncompressedBytes: Number(
        options.max_uncompressed_bytes ?? JMIX_DEFAULTS.max_uncompressed_bytes,
      ),
    };
    this.senderName = String(options.sender_name ?? JMIX_DEFAULTS.sender_name);
    this.requireSignature = options.require_signature === true;
  }

  /** The configured keys (imported once; a bad key fails every request that needs keys). */
  keys(): Promise<JmixKeys> {
    this.#keys ??= this.#import();
    return this.#keys;
  }

  async #import(): Promise<JmixKeys> {
    const o = this.#o;
    const str = (k: string) => (typeof o[k] === "string" ? o[k] as string : undefined);
    const wrap = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (err) {
        throw new Error(`jmix option ${name}: ${(err as Error).message}`, { cause: err });
      }
    };
    const signing = str("signing_key");
    const recipient = str("encryption_public_key");
    const decryption = str("decryption_key");
    const verify = Array.isArray(o.verify_keys) ? o.verify_keys as string[] : [];
    return {
      signing: signing
        ? {
          key: await wrap("signing_key", () => importSigningKey(signing)),
          keyId: str("signing_key_id"),
        }
        : undefined,
      verify: await Promise.all(verify.map((p) => wrap("verify_keys", () => importVerifyKey(p)))),
      encryptFor: recipient
        ? {
          key: await wrap("encryption_public_key", () => importRecipientKey(recipient)),
          keyId: str("encryption_key_id"),
        }
        : undefined,
      decryption: decryption
        ? await wrap("decryption_key", () => importDecryptionKey(decryption))
        : undefined,
    };
  }
}
