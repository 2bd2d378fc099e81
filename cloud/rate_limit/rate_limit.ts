/**
 * Request budgets (GCRA: a smooth token bucket keeping one timestamp per key). Budgets are kept
 * per instance, in memory; behind a load balancer each instance enforces its own share.
 */
import type { Clock } from "../clock.ts";

/** A budget: `limit` requests per `windowSeconds`, bursts up to `limit`. */
export interface Budget {
  limit: number;
  windowSeconds: number;
}

/** The budgets of the service. */
export interface RateLimits {
  /** Every request made with one API, user or machine token. */
  perToken: Budget;
  /** Sign-in and sign-up attempts from one IP address. */
  signInPerIp: Budget;
  /** Device authorization requests from one IP address. */
  deviceCodePerIp: Budget;
  /** Token endpoint requests (device polls, MCP code and refresh grants) and revocations. */
  devicePollPerIp: Budget;
  /** MCP client registrations (RFC 7591) from one IP address. */
  clientRegistrationPerIp: Budget;
  /**
   * Requests with a bad bearer token from one IP address (spraying). Past it, bad tokens from
   * that address get 429 instead of 401; valid tokens still pass (a shared NAT address must not
   * lock everyone out).
   */
  authFailuresPerIp: Budget;
  /** Failures of one credential (the same bad token again): past it, that credential gets 429. */
  authFailuresPerCredential: Budget;
}

/** Defaults: generous for tools, tight for guessing. */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  perToken: { limit: 600, windowSeconds: 60 },
  signInPerIp: { limit: 10, windowSeconds: 60 },
  deviceCodePerIp: { limit: 30, windowSeconds: 60 },
  devicePollPerIp: { limit: 120, windowSeconds: 60 },
  clientRegistrationPerIp: { limit: 10, windowSeconds: 60 },
  authFailuresPerIp: { limit: 30, windowSeconds: 60 },
  authFailuresPerCredential: { limit: 5, windowSeconds: 60 },
};

/** The answer of {@link RateLimiter.take}. */
export interface Decision {
  allowed: boolean;
  /** Whole seconds until a request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

/** Keeps the theoretical arrival time of each key and decides request by request. */
export class RateLimiter {
  #tat = new Map<string, number>();
  #clock: Clock;
  #maxKeys: number;

  constructor(clock: Clock, maxKeys = 100_000) {
    this.#clock = clock;
    this.#maxKeys = maxKeys;
  }

  /** Spends one request of `budget` for `key`. */
  take(key: string, budget: Budget): Decision {
    const now = this.#clock.now();
    const interval = (budget.windowSeconds * 1000) / budget.limit;
    const tolerance = budget.windowSeconds * 1000 - interval;
    const tat = Math.max(this.#tat.get(key) ?? now, now);
    if (tat - now > tolerance) {
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((tat - tolerance - now) / 1000)),
      };
    }
    if (this.#tat.size >= this.#maxKeys) this.#sweep(now);
    this.#tat.set(key, tat + interval);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** Checks `key` without spending anything. */
  peek(key: string, budget: Budget): Decision {
    const now = this.#clock.now();
    const interval = (budget.windowSeconds * 1000) / budget.limit;
    const tolerance = budget.windowSeconds * 1000 - interval;
    const tat = Math.max(this.#tat.get(key) ?? now, now);
    return tat - now > tolerance
      ? {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((tat - tolerance - now) / 1000)),
      }
      : { allowed: true, retryAfterSeconds: 0 };
  }

  /** Forgets keys whose budget is whole again. */
  #sweep(now: number): void {
    for (const [key, tat] of this.#tat) if (tat <= now) this.#tat.delete(key);
    if (this.#tat.size >= this.#maxKeys) this.#tat.clear();
  }
}
