/**
 * Password checks of one `basic_auth` middleware: the hashing runs elsewhere (a
 * {@link PasswordVerifier}: the isolate's password workers), results are remembered for a short
 * time by a digest of the user, password and hash (a client sending the same credentials on every
 * request pays once), and an unknown user is checked against a decoy that costs what the file's
 * users cost, so the time of an answer does not tell which users exist.
 */
import { sha256Hex } from "./credentials.ts";
import { checkMillis, decoyLike, hashParameters } from "./password_hash.ts";
import type { PasswordVerifier } from "./password_pool.ts";

/** How long a result is remembered: a match 5 minutes, a mismatch 30 seconds. */
const REMEMBER_MATCH_MS = 5 * 60_000;
const REMEMBER_MISMATCH_MS = 30_000;
/** Results remembered (oldest forgotten first). */
const REMEMBERED = 10_000;

/**
 * The decoy of a file: a hash with the parameters of the file's median user by cost (a random
 * salt and digest, so no password matches it). With one cost in the file, an unknown user costs
 * exactly what a known one does; with mixed costs, what the typical one does.
 */
export function decoyFor(hashes: Iterable<string>): string {
  const sorted = [...hashes].sort((a, b) => checkMillis(a) - checkMillis(b));
  if (sorted.length === 0) throw new Error("decoyFor: no hashes");
  return decoyLike(sorted[Math.floor((sorted.length - 1) / 2)]);
}

/**
 * Told of every password hashed (not answered from memory): against a user's hash (`known`) or
 * the decoy, with the hash's scheme and cost (see hashParameters).
 */
export type OnHashed = (known: boolean, parameters: string) => void;

/** Remembered password verifications, with a decoy for unknown users. */
export class PasswordChecks {
  readonly #verifier: PasswordVerifier;
  readonly #decoy: string;
  readonly #onHashed: OnHashed | undefined;
  readonly #remembered = new Map<string, { ok: boolean; until: number }>();

  /**
   * Checks through `verifier`; unknown users are checked against `decoy` (see decoyFor);
   * `onHashed` counts the checks (the gateway's `gateway_password_checks_total`).
   */
  constructor(verifier: PasswordVerifier, decoy: string, onHashed?: OnHashed) {
    this.#verifier = verifier;
    this.#decoy = decoy;
    this.#onHashed = onHashed;
  }

  /**
   * True when `password` is that of the user whose hash is `hash` (undefined: unknown user, never
   * true). `beforeHashing` runs only when the answer is not remembered, before any hash is
   * computed: a throw there (a per-address bound) refuses the check without its cost.
   */
  async verify(
    user: string,
    password: string,
    hash: string | undefined,
    beforeHashing?: () => void,
  ): Promise<boolean> {
    const key = sha256Hex(`${user}\0${password}\0${hash ?? ""}`);
    const seen = this.#remembered.get(key);
    if (seen && seen.until > Date.now()) return seen.ok;
    beforeHashing?.();
    let ok: boolean;
    if (hash === undefined) {
      // The decoy's cost, then no: nothing matches a decoy, and an unknown user never passes.
      await this.#verifier.verify(password, this.#decoy);
      ok = false;
    } else {
      ok = await this.#verifier.verify(password, hash);
    }
    this.#onHashed?.(hash !== undefined, hashParameters(hash ?? this.#decoy));
    this.#remember(key, ok);
    return ok;
  }

  #remember(key: string, ok: boolean): void {
    this.#remembered.delete(key);
    if (this.#remembered.size >= REMEMBERED) {
      this.#remembered.delete(this.#remembered.keys().next().value!);
    }
    this.#remembered.set(key, {
      ok,
      until: Date.now() + (ok ? REMEMBER_MATCH_MS : REMEMBER_MISMATCH_MS),
    });
  }
}
