/** Token signing keys (RSA, RS256), kept in KV so every instance signs and verifies alike. */
import { K } from "./keys.ts";

/** A secret as stored: AES-GCM with a random 96-bit IV, both base64 (sealed by auth/). */
export interface SealedSecret {
  alg: "A256GCM";
  iv: string;
  data: string;
}

/** A stored signing key. */
export interface SigningKeyRecord {
  kid: string;
  alg: "RS256";
  public_jwk: JsonWebKey;
  /** The private JWK, AES-GCM encrypted (auth/key_encryption.ts). */
  private_sealed?: SealedSecret;
  /** A plain private JWK of an older release: encrypted and removed at start. */
  private_jwk?: JsonWebKey;
  created_at: string;
  /** A published key that starts signing at this time (null or absent: active or retired). */
  activates_at?: string | null;
  /** When it stopped being the active key (null while active). */
  retired_at: string | null;
  /** When it is no longer published (every token it signed has expired by then). */
  remove_after: string | null;
}

/** Signing keys over KV. */
export class SigningKeyStore {
  #kv: Deno.Kv;

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** Every stored key (active and retired). */
  async all(): Promise<SigningKeyRecord[]> {
    const out: SigningKeyRecord[] = [];
    for await (const e of this.#kv.list<SigningKeyRecord>({ prefix: K.signingKeys() })) {
      out.push(e.value);
    }
    return out;
  }

  /** The kid of the active key and the entry's versionstamp. */
  async active(): Promise<Deno.KvEntryMaybe<string>> {
    return await this.#kv.get<string>(K.activeSigningKey());
  }

  /**
   * Makes `record` the active key if the active pointer is still `expected` (null: none yet); the
   * previous active key is retired with `previous`'s retirement fields. False when another
   * instance got there first.
   */
  async activate(
    record: SigningKeyRecord,
    expected: Deno.KvEntryMaybe<string>,
    previous?: SigningKeyRecord,
  ): Promise<boolean> {
    const op = this.#kv.atomic().check(expected)
      .set(K.signingKey(record.kid), record)
      .set(K.activeSigningKey(), record.kid);
    if (previous) op.set(K.signingKey(previous.kid), previous);
    return (await op.commit()).ok;
  }

  /** Stores a key record as it is (a new pending key, a migrated record). */
  async put(record: SigningKeyRecord): Promise<void> {
    await this.#kv.set(K.signingKey(record.kid), record);
  }

  /** Removes a key that is no longer published. */
  async remove(kid: string): Promise<void> {
    await this.#kv.delete(K.signingKey(kid));
  }
}
