/**
 * Request budgets of the cloud service (GCRA, one timestamp per key, kept in memory per instance).
 * The options name the budgets, the services hold one limiter, the API spends from it: so this
 * folder sits below all three and imports nothing of the cloud but its clock.
 *
 * @example
 * ```ts
 * import { systemClock } from "../clock.ts";
 * import { RateLimiter } from "./mod.ts";
 *
 * const limiter = new RateLimiter(systemClock);
 * const budget = { limit: 2, windowSeconds: 60 };
 * console.log(limiter.take("ip:10.0.0.1", budget).allowed); // true
 * console.log(limiter.take("ip:10.0.0.1", budget).allowed); // true
 * console.log(limiter.take("ip:10.0.0.1", budget).allowed); // false: retry in about 30 s
 * ```
 *
 * @module
 */
export {
  type Budget,
  type Decision,
  DEFAULT_RATE_LIMITS,
  RateLimiter,
  type RateLimits,
} from "./rate_limit.ts";
