/**
 * The `rate_limit` middleware: a token bucket per key (the client address, a header, or a
 * metadata value such as `auth.subject`). A bucket holds up to `burst` requests and refills at
 * `requests_per_second`; a request finding it empty gets 429 `rate_limited` with `Retry-After`
 * (seconds until a token is back) and is counted in `gateway_errors_total{code="rate_limited"}`.
 * Buckets live in memory, at most `max_keys` of them (the least recently used is forgotten: a key
 * forgotten starts again full, which errs on the side of serving).
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { Middleware } from "../pipeline/mod.ts";

/** Options of `rate_limit` (after schema checks). */
export interface RateLimitOptions {
  requests_per_second: number;
  burst?: number;
  /** `client_ip`, `header:<name>` or `metadata:<key>`. */
  key: string;
  max_keys: number;
}

/** One key's bucket: tokens left at time `at` (ms). */
interface Bucket {
  tokens: number;
  at: number;
}

/** The key of requests that do not carry the configured header or metadata: one shared bucket. */
const NO_KEY = "\0none";

/** The token-bucket middleware. */
export class RateLimitMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: false };
  readonly #rate: number;
  readonly #burst: number;
  readonly #keyOf: (req: RequestEnvelope) => string;
  readonly #maxKeys: number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(name: string, options: RateLimitOptions, now: () => number = Date.now) {
    this.name = name;
    this.#rate = options.requests_per_second / 1000; // tokens per ms
    this.#burst = options.burst ?? Math.max(1, Math.ceil(options.requests_per_second));
    this.#maxKeys = options.max_keys;
    this.#now = now;
    const [kind, ...rest] = options.key.split(":");
    const arg = rest.join(":");
    this.#keyOf = kind === "header"
      ? (req) => req.readHeaders.get(arg) ?? NO_KEY
      : kind === "metadata"
      ? (req) => req.metadata[arg] ?? NO_KEY
      : (req) => req.metadata["client.ip"] ?? req.remoteAddr ?? NO_KEY;
  }

  onRequest(req: RequestEnvelope): void {
    const key = this.#keyOf(req);
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (bucket) {
      this.#buckets.delete(key); // re-inserted below: most recently used last
      bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#rate);
      bucket.at = now;
    } else {
      if (this.#buckets.size >= this.#maxKeys) {
        this.#buckets.delete(this.#buckets.keys().next().value!);
      }
      bucket = { tokens: this.#burst, at: now };
    }
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    const waitSecs = Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate / 1000));
    const err = new GatewayError(
      429,
      "rate_limited",
      `too many requests; retry in ${waitSecs} s`,
    );
    err.headers = { "retry-after": String(waitSecs) };
    throw err;
  }
}

/** Build a `rate_limit` middleware (options already checked by the config schema). */
export function createRateLimitMiddleware(config: MiddlewareConfig): Middleware {
  return new RateLimitMiddleware(config.name, config.options as unknown as RateLimitOptions);
}
