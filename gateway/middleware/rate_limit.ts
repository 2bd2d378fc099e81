/**
 * The `rate_limit` middleware: a token bucket per key (the client address, a header, or a
 * metadata value such as `auth.subject`). A bucket holds up to `burst` requests and refills at
 * `requests_per_second`; a request finding it empty gets 429 `rate_limited` with `Retry-After`
 * (seconds until a token is back) and is counted in `gateway_errors_total{code="rate_limited"}`.
 * Buckets live in shared memory (shared_buckets.ts), at most `max_keys` of them, so every
 * data-plane worker takes from the same bucket of a key; the least recently used of a full
 * neighbourhood is forgotten (it starts again full, which errs on the side of serving).
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { BuildContext, Middleware } from "../pipeline/mod.ts";
import { SharedBuckets } from "./shared_buckets.ts";

/** Options of `rate_limit` (after schema checks). */
export interface RateLimitOptions {
  requests_per_second: number;
  burst?: number;
  /** `client_ip`, `header:<name>` or `metadata:<key>`. */
  key: string;
  max_keys: number;
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
  readonly #buckets: SharedBuckets;
  readonly #now: () => number;

  /**
   * `memory` holds the buckets (SharedBuckets.bytesFor(max_keys) bytes; the workers of a gateway
   * pass the same one); absent, the middleware has buckets of its own.
   */
  constructor(
    name: string,
    options: RateLimitOptions,
    now: () => number = Date.now,
    memory?: SharedArrayBuffer,
  ) {
    this.name = name;
    this.#rate = options.requests_per_second / 1000; // tokens per ms
    this.#burst = options.burst ?? Math.max(1, Math.ceil(options.requests_per_second));
    this.#buckets = new SharedBuckets(
      memory ?? new SharedArrayBuffer(SharedBuckets.bytesFor(options.max_keys)),
      options.max_keys,
    );
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
    const tokens = this.#buckets.take(key, this.#now(), this.#rate, this.#burst);
    if (tokens >= 1) return;
    const waitSecs = Math.max(1, Math.ceil((1 - tokens) / this.#rate / 1000));
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
export function createRateLimitMiddleware(
  config: MiddlewareConfig,
  ctx: BuildContext,
): Middleware {
  const options = config.options as unknown as RateLimitOptions;
  // One table for every worker: the build hands each the same shared memory under this name.
  const memory = ctx.sharedMemory?.(
    `middleware.${config.name}`,
    SharedBuckets.bytesFor(options.max_keys),
  );
  return new RateLimitMiddleware(config.name, options, Date.now, memory);
}
