/**
 * Password checks with a bound on their cost: a bcrypt or Argon2 verification takes tens to
 * hundreds of milliseconds of CPU, so at most {@link MAX_ACTIVE} run at once and at most
 * {@link MAX_WAITING} wait (beyond that the request gets 503 with Retry-After rather than a queue
 * that grows without end), and results are remembered for a short time by a digest of the user,
 * password and hash (a client sending the same credentials on every request pays once).
 */
import { sha256Hex } from "./credentials.ts";
import { busy } from "./failures.ts";
import { verifyPassword } from "./password_hash.ts";

/** Verifications running at once. */
export const MAX_ACTIVE = 4;
/** Verifications waiting for a turn. */
export const MAX_WAITING = 64;
/** How long a result is remembered: a match 5 minutes, a mismatch 30 seconds. */
const REMEMBER_MATCH_MS = 5 * 60_000;
const REMEMBER_MISMATCH_MS = 30_000;
/** Results remembered (oldest forgotten first). */
const REMEMBERED = 10_000;

/**
 * A bcrypt hash of a random password, checked for unknown users so that an unknown user costs
 * what a known one does (no user enumeration by timing).
 */
const DECOY_HASH = "$2b$10$a/5uc/J2mtxzxm0LyRP5C.ID5uAYra17D.qcpX4HAH51wsFInnHSC";

/** Bounded, remembered password verifications. */
export class PasswordChecks {
  readonly #remembered = new Map<string, { ok: boolean; until: number }>();
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  /** True when `password` is that of the user whose hash is `hash` (undefined: unknown user). */
  async verify(user: string, password: string, hash: string | undefined): Promise<boolean> {
    const key = sha256Hex(`${user}\0${password}\0${hash ?? ""}`);
    const seen = this.#remembered.get(key);
    const now = Date.now();
    if (seen && seen.until > now) return seen.ok;
    await this.#turn();
    let ok: boolean;
    try {
      ok = (await verifyPassword(password, hash ?? DECOY_HASH)) && hash !== undefined;
    } finally {
      this.#release();
    }
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

  /** Waits for a free slot; throws 503 when too many are waiting already. */
  #turn(): Promise<void> {
    if (this.#active < MAX_ACTIVE) {
      this.#active++;
      return Promise.resolve();
    }
    if (this.#waiting.length >= MAX_WAITING) return Promise.reject(busy());
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active--;
  }
}
