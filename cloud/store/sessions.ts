/** Web sessions, stored by the SHA-256 of the session id (the cookie value is never stored). */
import { type Clock, iso } from "../clock.ts";
import { randomBase64Url, sha256Hex } from "./ids.ts";
import { K } from "./keys.ts";

/** A web session. */
export interface Session {
  user_id: string;
  /** The CSRF token of every form of this session. */
  csrf: string;
  created_at: string;
  expires_at: string;
}

/** Sessions over KV (expired ones are dropped by KV itself). */
export class SessionStore {
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** Starts a session; returns the cookie value (shown only to the browser) and the session. */
  async create(userId: string, ttlSeconds: number): Promise<{ id: string; session: Session }> {
    const now = this.#clock.now();
    const id = randomBase64Url(32);
    const session: Session = {
      user_id: userId,
      csrf: randomBase64Url(32),
      created_at: iso(now),
      expires_at: iso(now + ttlSeconds * 1000),
    };
    await this.#kv.set(K.session(await sha256Hex(id)), session, { expireIn: ttlSeconds * 1000 });
    return { id, session };
  }

  /** The live session of cookie value `id`, or null. */
  async get(id: string): Promise<Session | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
    const session = (await this.#kv.get<Session>(K.session(await sha256Hex(id)))).value;
    if (!session || Date.parse(session.expires_at) <= this.#clock.now()) return null;
    return session;
  }

  /** Ends a session. */
  async delete(id: string): Promise<void> {
    await this.#kv.delete(K.session(await sha256Hex(id)));
  }
}
