/**
 * The key ring: the active RS256 signing key and every key still published. Keys live in KV; each
 * instance caches them for a minute, and reloads at once when a token names a kid it does not know.
 * Rotation makes a new key active; the old one stays published (and verifies tokens) until every
 * token it signed has expired.
 */
import { exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { type Clock, iso } from "../clock.ts";
import { randomBase64Url } from "../store/ids.ts";
import type { SigningKeyRecord, SigningKeyStore } from "../store/signing_keys.ts";

/** A published key as it appears in the JWKS. */
export interface PublicJwk extends JWK {
  kid: string;
  alg: "RS256";
  use: "sig";
}

const CACHE_MS = 60_000;
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

  constructor(store: SigningKeyStore, clock: Clock, longestTokenLifetimeMs: number) {
    this.#store = store;
    this.#clock = clock;
    this.#retentionMs = longestTokenLifetimeMs + 24 * 60 * 60 * 1000;
  }

  /** Makes sure an active key exists (creating the first one) and loads the ring. */
  async init(): Promise<void> {
    const active = await this.#store.active();
    if (active.value === null) {
      await this.#store.activate(await this.#newKey(), active);
    }
    await this.#reload();
  }

  /** Creates a new active key and retires the current one; returns the new kid. */
  async rotate(): Promise<string> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const active = await this.#store.active();
      const current = (await this.#store.all()).find((k) => k.kid === active.value);
      const now = this.#clock.now();
      const next = await this.#newKey();
      const retired = current && {
        ...current,
        retired_at: iso(now),
        remove_after: iso(now + this.#retentionMs),
      };
      if (await this.#store.activate(next, active, retired)) {
        await this.prune();
        await this.#reload();
        return next.kid;
      }
    }
    throw new Error("key rotation raced with another instance five times; retry");
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
    const jwk = which === "private" ? record.private_jwk : record.public_jwk;
    const key = await importJWK(jwk as JWK, "RS256") as CryptoKey;
    this.#imported.set(cacheKey, key);
    return key;
  }

  async #newKey(): Promise<SigningKeyRecord> {
    const { publicKey, privateKey } = await generateKeyPair("RS256", {
      modulusLength: 2048,
      extractable: true,
    });
    return {
      kid: randomBase64Url(12),
      alg: "RS256",
      public_jwk: await exportJWK(publicKey) as JsonWebKey,
      private_jwk: await exportJWK(privateKey) as JsonWebKey,
      created_at: iso(this.#clock.now()),
      retired_at: null,
      remove_after: null,
    };
  }
}
