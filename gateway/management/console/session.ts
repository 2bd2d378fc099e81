/**
 * Sign-in to the operations console: the management token, typed once into a form, becomes a
 * session. The session cookie is HttpOnly, SameSite=Strict, `Secure` (and `__Host-`) over TLS; the
 * server keeps only the SHA-256 of its value. A session ends when it idles past its limit, reaches
 * its maximum age, is signed out, or when the token it was opened with stops being valid (a
 * rotated `token_file`). Every POST carries the session's CSRF token, and a POST whose `Origin`
 * (or `Sec-Fetch-Site`) says it came from another site is refused before any handler.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";

/** What a signed-in operator may do. */
export interface ConsoleAccess {
  /** The token's name (`admin` for the main token), as the audit trail names the actor. */
  name: string;
  /** Who signed in, as the audit trail and the pages name them (never the token). */
  subject: string;
  /** The role's name, shown in the header (`operator`, `viewer`). */
  role: string;
  /** May see message content (message detail). */
  viewContent: boolean;
  /** May replay, edit and resend, and retry dead letters. */
  operate: boolean;
}

/** One signed-in browser. */
export interface ConsoleSession {
  access: ConsoleAccess;
  /** The CSRF token every form of this session carries. */
  csrf: string;
  /** SHA-256 (hex) of the token signed in with: the session ends once it is no longer valid. */
  tokenDigest: string;
  createdAt: number;
  seenAt: number;
}

/** Limits of the sessions. */
export interface SessionLimits {
  /** Idle time that ends a session, ms. */
  idleMs: number;
  /** Age that ends a session, ms. */
  maxAgeMs: number;
  /** Most sessions held; the oldest goes first. */
  maxSessions: number;
}

/** Default limits: 30 minutes idle, 12 hours at most, 1000 sessions. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  idleMs: 30 * 60_000,
  maxAgeMs: 12 * 3600_000,
  maxSessions: 1000,
};

/** Largest form body the console reads, bytes (an edited message to resend comes in a form). */
export const MAX_FORM_BYTES = 1024 * 1024;

/** SHA-256 of a string, hex. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Constant-time comparison of two strings. */
export function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  if (x.length !== y.length) return false;
  return timingSafeEqual(x, y);
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The sessions of the console (in memory: a restart signs everyone out). */
export class ConsoleSessions {
  readonly #byDigest = new Map<string, ConsoleSession>();
  readonly #limits: SessionLimits;
  readonly #now: () => number;

  constructor(limits: SessionLimits = DEFAULT_SESSION_LIMITS, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Sessions held now. */
  get size(): number {
    return this.#byDigest.size;
  }

  /** Opens a session; returns the cookie value (shown to the browser only). */
  open(access: ConsoleAccess, tokenDigest: string): { id: string; session: ConsoleSession } {
    this.#sweep();
    while (this.#byDigest.size >= this.#limits.maxSessions) {
      const oldest = this.#byDigest.keys().next().value;
      if (oldest === undefined) break;
      this.#byDigest.delete(oldest);
    }
    const id = randomToken();
    const now = this.#now();
    const session: ConsoleSession = {
      access,
      csrf: randomToken(),
      tokenDigest,
      createdAt: now,
      seenAt: now,
    };
    this.#byDigest.set(sha256Hex(id), session);
    return { id, session };
  }

  /**
   * The live session of a cookie value; null when unknown, expired, or when `revalidate` says its
   * token is no longer valid (the session is then ended). The session takes the access its token
   * has now (a reload may change a token's role).
   */
  get(
    id: string | undefined,
    revalidate: (digest: string) => ConsoleAccess | null,
  ): ConsoleSession | null {
    if (!id || !TOKEN_SHAPE.test(id)) return null;
    const key = sha256Hex(id);
    const session = this.#byDigest.get(key);
    if (!session) return null;
    const now = this.#now();
    const access = now - session.seenAt > this.#limits.idleMs ||
        now - session.createdAt > this.#limits.maxAgeMs
      ? null
      : revalidate(session.tokenDigest);
    if (!access) {
      this.#byDigest.delete(key);
      return null;
    }
    session.access = access;
    session.seenAt = now;
    return session;
  }

  /** Ends the session of a cookie value. */
  close(id: string | undefined): void {
    if (id && TOKEN_SHAPE.test(id)) this.#byDigest.delete(sha256Hex(id));
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, s] of this.#byDigest) {
      if (now - s.seenAt > this.#limits.idleMs || now - s.createdAt > this.#limits.maxAgeMs) {
        this.#byDigest.delete(key);
      }
    }
  }
}

/** True when the request came over TLS (the cookie is then `Secure` and `__Host-`). */
export function overTls(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

/** Name of the session cookie. */
export function sessionCookieName(c: Context): string {
  return overTls(c) ? "__Host-gw_console" : "gw_console";
}

function preCsrfCookieName(c: Context): string {
  return overTls(c) ? "__Host-gw_console_csrf" : "gw_console_csrf";
}

function cookieOptions(c: Context, maxAgeSecs: number) {
  return {
    httpOnly: true,
    secure: overTls(c),
    sameSite: "Strict" as const,
    path: "/",
    maxAge: maxAgeSecs,
  };
}

/** The session cookie's value, if sent. */
export function sessionCookie(c: Context): string | undefined {
  return getCookie(c, sessionCookieName(c));
}

/** Sets the session cookie (and drops the sign-in form's CSRF cookie). */
export function setSessionCookie(c: Context, id: string, limits: SessionLimits): void {
  setCookie(c, sessionCookieName(c), id, cookieOptions(c, Math.floor(limits.maxAgeMs / 1000)));
  deleteCookie(c, preCsrfCookieName(c), { path: "/", secure: overTls(c) });
}

/** Clears the session cookie. */
export function clearSessionCookie(c: Context): void {
  deleteCookie(c, sessionCookieName(c), { path: "/", secure: overTls(c) });
}

/** The sign-in form's CSRF token (double submit: the same value in a cookie and the form). */
export function preSessionCsrf(c: Context): string {
  const existing = getCookie(c, preCsrfCookieName(c));
  if (existing && TOKEN_SHAPE.test(existing)) return existing;
  const token = randomToken();
  setCookie(c, preCsrfCookieName(c), token, cookieOptions(c, 3600));
  return token;
}

/** True when the sign-in form's `_csrf` matches its cookie. */
export function preSessionCsrfOk(c: Context, sent: string | undefined): boolean {
  const expected = getCookie(c, preCsrfCookieName(c)) ?? "";
  return TOKEN_SHAPE.test(expected) && sameSecret(sent ?? "", expected);
}

/**
 * Why a POST is refused as cross-site, or null: an `Origin` whose host is not the request's
 * `Host` (also `null`, what sandboxed and `file:` pages send), or `Sec-Fetch-Site` naming
 * another site. The scheme is not compared: behind a proxy that ends TLS the page is https and
 * the listener sees http, for the same host (which the Host check has accepted).
 */
export function crossSiteReason(c: Context): string | null {
  const host = (c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
  const origin = c.req.header("origin");
  if (origin !== undefined && originHost(origin) !== host) {
    return `Origin ${origin} is not this console`;
  }
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return `Sec-Fetch-Site ${site}`;
  }
  return null;
}

/** The host (and port, when not the scheme's default) of an `Origin` value; "" when unreadable. */
function originHost(origin: string): string {
  try {
    const u = new URL(origin);
    return /^https?:$/.test(u.protocol) ? u.host.toLowerCase() : "";
  } catch {
    return "";
  }
}

/** Reads a urlencoded form (at most {@link MAX_FORM_BYTES}); null when it is larger. */
export async function readForm(c: Context): Promise<URLSearchParams | null> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return new URLSearchParams();
  const body = c.req.raw.body;
  if (!body) return new URLSearchParams();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > MAX_FORM_BYTES) {
      await body.cancel().catch(() => {});
      return null;
    }
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/**
 * Failed sign-ins allowed per window before the form answers 429 (the token is 32+ random
 * characters; this keeps a local process from using the form as an oracle at full speed).
 */
export class SignInLimiter {
  readonly #max: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  #failures: number[] = [];

  constructor(max = 20, windowMs = 60_000, now: () => number = Date.now) {
    this.#max = max;
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /** Seconds to wait before the next attempt, or 0 when one may be made. */
  retryAfterSecs(): number {
    const now = this.#now();
    this.#failures = this.#failures.filter((t) => now - t < this.#windowMs);
    if (this.#failures.length < this.#max) return 0;
    return Math.max(1, Math.ceil((this.#failures[0] + this.#windowMs - now) / 1000));
  }

  /** A failed attempt. */
  failed(): void {
    this.#failures.push(this.#now());
    if (this.#failures.length > this.#max * 2) this.#failures.splice(0, this.#max);
  }
}
