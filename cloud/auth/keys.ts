/**
 * The key ring: the active RS256 signing key and every key still published. Keys live in KV, their
 * private halves AES-GCM encrypted (key_encryption.ts); each instance caches them for a minute, and
 * reloads at once when a token names a kid it does not know.
 *
 * Rotation publishes a new key first and lets it sign only after {@link PUBLISH_LEAD_MS}, longer
 * than any verifier caches the JWKS (gateways: ten minutes), so no token is ever signed by a key
 * its verifier cannot know yet; the old key stays published (and verifies tokens) until every
 * token it signed has expired.
 */
import { exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { type Clock, iso } from "../clock.ts";
import { randomBase64Url } from "../store/mod.ts";
import { openSecret, sealSecret } from "./key_encryption.ts";
import type { SigningKeyRecord, SigningKeyStore } from "../store/mod.ts";

/** A published key as it appears in the JWKS. */
export interface PublicJwk extends JWK {
  kid: string;
  alg: "RS256";
  use: "sig";
}

const CACHE_MS = 60_000;
/** How long a rotated-in key is published before it signs. */
export const PUBLISH_LEAD_MS = 15 * 60_000;
const RELOAD_AT_MOST_EVERY_MS = 5_000;

/** Signing and verification keys, shared through KV. */
export class KeyRing {
  #store: SigningKeyStore;
  #clock: Clock;
  /** How long a retired key stays published: the longest token lifetime plus a day. */
  #retentionMs: number;
  #loadedAt = -Infinity;
  #records: SigningKeyRecord[] = [];
  #activeKid: string | null = null;
  #imported = new Map<string, CryptoKey>();
  #loading: Promise<void> | null = null;
  #sealKey: CryptoKey;

  constructor(
    store: SigningKeyStore,
    clock: Clock,
    longestTokenLifetimeMs: number,
    sealKey: CryptoKey,
  ) {
    this.#store = store;
    this.#clock = clock;
    this.#retentionMs = longestTokenLifetimeMs + 24 * 60 * 60 * 1000;
    this.#sealKey = sealKey;
  }

  /**
   * Makes sure an active key exists (creating the first one), encrypts private keys an older
   * release stored in plain text, checks that the key opens every stored key, loads the ring.
   */
  async init(): Promise<void> {
    const active = await this.#store.active();
    if (active.value === null) {
      await this.#store.activate(await this.#newKey(), active);
    }
    for (const record of await this.#store.all()) {
      if (record.private_jwk) {
        const { private_jwk, ...rest } = record;
        await this.#store.put({
          ...rest,
          private_sealed: await sealSecret(this.#sealKey, record.kid, JSON.stringify(private_jwk)),
        });
      }
    }
    for (const record of await this.#store.all()) await this.#privateJwk(record);
    await this.#reload();
  }

  /**
   * Publishes a new key that signs from {@link PUBLISH_LEAD_MS} on (the current key then retires);
   * returns its kid and that time. `activateAt` overrides the time (tests, an emergency rotation).
   */
  async rotate(activateAt?: number): Promise<{ kid: string; activates_at: string }> {
    const next = await this.#newKey();
    const at = iso(activateAt ?? this.#clock.now() + PUBLISH_LEAD_MS);
    await this.#store.put({ ...next, activates_at: at });
    await this.prune();
    await this.#reload();
    return { kid: next.kid, activates_at: at };
  }

  /** Activates the newest published key whose time has come, retiring the current one. */
  async #promote(): Promise<void> {
    const now = this.#clock.now();
    const due = this.#records
      .filter((k) => k.activates_at && Date.parse(k.activates_at) <= now)
      .sort((a, b) => Date.parse(b.activates_at!) - Date.parse(a.activates_at!))[0];
    if (!due) return;
    for (let attempt = 0; attempt < 5; attempt++) {
      const active = await this.#store.active();
      const all = await this.#store.all();
      const pending = all.find((k) => k.kid === due.kid);
      if (!pending?.activates_at) break; // another instance promoted it
      const current = all.find((k) => k.kid === active.value);
      const retired = current && {
        ...current,
        retired_at: iso(now),
        remove_after: iso(now + this.#retentionMs),
      };
      if (await this.#store.activate({ ...pending, activates_at: null }, active, retired)) break;
    }
    // Older pending keys overtaken by a newer one retire unused.
    for (const k of this.#records) {
      if (k.kid !== due.kid && k.activates_at && Date.parse(k.activates_at) <= now) {
        await this.#store.put({
          ...k,
          activates_at: null,
          retired_at: iso(now),
          remove_after: iso(now + this.#retentionMs),
        });
      }
    }
    await this.#reload();
  }

  /** Deletes retired keys past their publication window. */
  async prune(): Promise<string[]> {
    const now = this.#clock.now();
    const removed: string[] = [];
    for (const k of await this.#store.all()) {
      if (k.remove_after && Date.parse(k.remove_after) <= now) {
        await this.#store.remove(k.kid);
        removed.push(k.kid);
      }
    }
    if (removed.length) await this.#reload();
    return removed;
  }

  /** The active key for signing. */
  async signingKey(): Promise<{ kid: string; key: CryptoKey }> {
    await this.#fresh();
    await this.#promote();
    if (!this.#activeKid) throw new Error("no active signing key");
    return { kid: this.#activeKid, key: await this.#import(this.#activeKid, "private") };
  }

  /** The public key `kid`, or null when it is not (or no longer) published. */
  async verificationKey(kid: string): Promise<CryptoKey | null> {
    await this.#fresh();
    if (!this.#published(kid) && this.#clock.now() - this.#loadedAt > RELOAD_AT_MOST_EVERY_MS) {
      await this.#reload();
    }
    return this.#published(kid) ? await this.#import(kid, "public") : null;
  }

  /** The JWKS document. */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    await this.#fresh();
    const now = this.#clock.now();
    return {
      keys: this.#records
        .filter((k) => !k.remove_after || Date.parse(k.remove_after) > now)
        .map((k) => ({ ...k.public_jwk, kid: k.kid, alg: "RS256", use: "sig" } as PublicJwk)),
    };
  }

  #published(kid: string): boolean {
    const now = this.#clock.now();
    return this.#records.some((k) =>
      k.kid === kid && (!k.remove_after || Date.parse(k.remove_after) > now)
    );
  }

  async #fresh(): Promise<void> {
    if (this.#clock.now() - this.#loadedAt > CACHE_MS) await this.#reload();
  }

  async #reload(): Promise<void> {
    this.#loading ??= (async () => {
      try {
        const [records, active] = await Promise.all([this.#store.all(), this.#store.active()]);
        this.#records = records;
        this.#activeKid = active.value;
        this.#loadedAt = this.#clock.now();
        for (const kid of [...this.#imported.keys()]) {
          if (!records.some((r) => kid.endsWith(`:${r.kid}`))) this.#imported.delete(kid);
        }
      } finally {
        this.#loading = null;
      }
    })();
    await this.#loading;
  }

  async #import(kid: string, which: "private" | "public"): Promise<CryptoKey> {
    const cacheKey = `${which}:${kid}`;
    const cached = this.#imported.get(cacheKey);
    if (cached) return cached;
    const record = this.#records.find((k) => k.kid === kid);
    if (!record) throw new Error(`unknown signing key ${kid}`);
    const jwk = which === "private" ? await this.#privateJwk(record) : record.public_jwk;
    const key = await importJWK(jwk as JWK, "RS256") as CryptoKey;
    this.#imported.set(cacheKey, key);
    return key;
  }

  /** The decrypted private JWK of a record (a plain one of an older release as it is). */
  async #privateJwk(record: SigningKeyRecord): Promise<JsonWebKey> {
    if (record.private_sealed) {
      return JSON.parse(await openSecret(this.#sealKey, record.kid, record.private_sealed));
    }
    if (record.private_jwk) return record.private_jwk;
    throw new Error(`signing key ${record.kid} has no private key`);
  }

  async #newKey(): Promise<SigningKeyRecord> {
    const { publicKey, privateKey } = await generateKeyPair("RS256", {
      modulusLength: 2048,
      extractable: true,
    });
    const kid = randomBase64Url(12);
    return {
      kid,
      alg: "RS256",
      public_jwk: await exportJWK(publicKey) as JsonWebKey,
      private_sealed: await sealSecret(
        this.#sealKey,
        kid,
        JSON.stringify(await exportJWK(privateKey)),
      ),
      created_at: iso(this.#clock.now()),
      retired_at: null,
      remove_after: null,
    };
  }
}
