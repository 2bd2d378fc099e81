/**
 * Credentials that do not expire on their own: a bearer token (from the configuration or a file
 * re-read when it changes), user and password (Basic), static headers.
 */
import { type Clock, systemClock } from "../../../shared/mod.ts";
import type { HeaderField, UpstreamCredentials } from "./types.ts";

/** The same fields on every request. */
export class StaticCredentials implements UpstreamCredentials {
  readonly #fields: readonly HeaderField[];

  constructor(fields: readonly HeaderField[]) {
    this.#fields = fields;
  }

  fields(): readonly HeaderField[] {
    return this.#fields;
  }

  /** A static credential does not get better by asking again. */
  rejected(): boolean {
    return false;
  }

  close(): void {}
}

/** `Authorization: Basic` of `user` and `password` (RFC 7617, UTF-8). */
export function basicAuthorization(user: string, password: string): HeaderField {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return ["authorization", `Basic ${btoa(binary)}`];
}

/** How often the token file's modification time is looked at, at most. */
const CHECK_INTERVAL_MS = 1000;

/**
 * A bearer token kept in a file (a secret mounted by Kubernetes or written by a sidecar): read at
 * start, and again when its modification time changes (looked at, in the background, at most once a
 * second while requests come) or after the upstream refused it.
 */
export class TokenFileCredentials implements UpstreamCredentials {
  readonly #path: string;
  #token: string;
  #mtime: number;
  readonly #clock: Clock;
  #checkedAt: number;
  #stale = false;
  /** The background look at the file started by the last `fields()`, if any (tests wait on it). */
  refreshing: Promise<void> = Promise.resolve();

  private constructor(path: string, token: string, mtime: number, clock: Clock) {
    this.#path = path;
    this.#token = token;
    this.#mtime = mtime;
    this.#clock = clock;
    this.#checkedAt = clock.now();
  }

  /**
   * Reads `path` (an error names it when it cannot be read or is empty); `clock` paces the looks at
   * its modification time.
   */
  static async open(path: string, clock: Clock = systemClock): Promise<TokenFileCredentials> {
    const [token, mtime] = await TokenFileCredentials.#read(path);
    return new TokenFileCredentials(path, token, mtime, clock);
  }

  static async #read(path: string): Promise<[string, number]> {
    const stat = await Deno.stat(path);
    const token = (await Deno.readTextFile(path)).trim();
    if (token === "") throw new Error(`${path} is empty`);
    // One token of visible ASCII (RFC 6750 b64token is narrower still).
    if (!/^[\x21-\x7e]+$/.test(token)) throw new Error(`${path} holds more than one token`);
    return [token, stat.mtime?.getTime() ?? 0];
  }

  fields(): readonly HeaderField[] | Promise<readonly HeaderField[]> {
    if (this.#stale) return this.#reread().then(() => this.#fields());
    const now = this.#clock.now();
    if (now - this.#checkedAt >= CHECK_INTERVAL_MS) {
      this.#checkedAt = now;
      this.refreshing = this.#refreshIfChanged();
    }
    return this.#fields();
  }

  #fields(): readonly HeaderField[] {
    return [["authorization", `Bearer ${this.#token}`]];
  }

  async #refreshIfChanged(): Promise<void> {
    try {
      const mtime = (await Deno.stat(this.#path)).mtime?.getTime() ?? 0;
      if (mtime !== this.#mtime) await this.#reread();
    } catch {
      // Kept: the last token read stays in use until the file is back.
    }
  }

  async #reread(): Promise<void> {
    this.#stale = false;
    try {
      [this.#token, this.#mtime] = await TokenFileCredentials.#read(this.#path);
    } catch {
      // Kept, as above.
    }
  }

  /** The upstream refused the token: read the file again before the next request. */
  rejected(used: readonly HeaderField[]): boolean {
    if (used[0]?.[1] !== `Bearer ${this.#token}`) return true; // already replaced
    this.#stale = true;
    return true;
  }

  close(): void {}
}
