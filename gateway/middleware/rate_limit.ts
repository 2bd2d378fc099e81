/**
 * The `rate_limit` middleware: a token bucket per key (the client address, a header, or a
 * metadata value such as `auth.subject`). A bucket holds up to `burst` requests and refills at
 * `requests_per_second`; a request finding it empty gets 429 `rate_limited` with `Retry-After`
 * (seconds until a token is back) and is counted in `gateway_errors_total{code="rate_limited"}`.
 *
 * `store = "memory"` (the default): buckets live in shared memory (shared_buckets.ts), at most
 * `max_keys` of them, so every data-plane worker takes from the same bucket of a key; the least
 * recently used of a full neighbourhood is forgotten (it starts again full, which errs on the side
 * of serving). `store = "redis"`: buckets live in Redis (redis_buckets.ts), shared by every
 * gateway that uses the same server; while Redis cannot be reached `on_store_error` decides:
 * `local` takes from the shared-memory buckets above, `allow` passes, `deny` answers 503
 * `rate_limit_unavailable`. Each such request is counted in
 * `gateway_rate_limit_store_errors_total`; the change of state is logged once and shown as the
 * degraded component `rate_limit.<name>` (store_state.ts).
 */
import { resolve } from "node:path";
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { RateLimitMetrics } from "../observability/mod.ts";
import type { BuildContext, Middleware } from "../pipeline/mod.ts";
import type { RedisStoreOptions } from "./redis_buckets.ts";
import { SharedBuckets } from "./shared_buckets.ts";
import { describe, STORE_STATE_BYTES, StoreState } from "./store_state.ts";

/** What a `redis` store does while Redis cannot be reached. */
export type StoreErrorPolicy = "local" | "allow" | "deny";

/** Options of `rate_limit` (after schema checks). */
export interface RateLimitOptions {
  requests_per_second: number;
  burst?: number;
  /** `client_ip`, `header:<name>` or `metadata:<key>`. */
  key: string;
  max_keys: number;
  store?: "memory" | "redis";
  redis_url?: string;
  redis_username?: string;
  redis_password?: string;
  redis_password_file?: string;
  redis_ca_path?: string;
  redis_cert_path?: string;
  redis_key_path?: string;
  redis_timeout_ms?: number;
  redis_key_prefix?: string;
  on_store_error?: StoreErrorPolicy;
}

/** The buckets a shared store keeps (RedisBuckets; a stand-in in tests). */
export interface RemoteBuckets {
  /** True while commands can be sent. */
  readonly connected: boolean;
  /** Tokens the key's bucket held before one was taken; rejects when the store failed. */
  take(key: string): Promise<number>;
  close(): void;
}

/** A shared store and what to do without it. */
export interface SharedStore {
  buckets: RemoteBuckets;
  state: StoreState;
  policy: StoreErrorPolicy;
  metrics?: RateLimitMetrics;
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
  readonly #store: SharedStore | undefined;
  /** A request is asking a store known to be down whether it is back. */
  #probing = false;

  /**
   * `memory` holds the buckets (SharedBuckets.bytesFor(max_keys) bytes; the workers of a gateway
   * pass the same one); absent, the middleware has buckets of its own. With `store`, the buckets
   * are the store's, and those in `memory` serve the `local` policy while it is down.
   */
  constructor(
    name: string,
    options: RateLimitOptions,
    now: () => number = Date.now,
    memory?: SharedArrayBuffer,
    store?: SharedStore,
  ) {
    this.name = name;
    this.#rate = options.requests_per_second / 1000; // tokens per ms
    this.#burst = burstOf(options);
    this.#buckets = new SharedBuckets(
      memory ?? new SharedArrayBuffer(SharedBuckets.bytesFor(options.max_keys)),
      options.max_keys,
    );
    this.#now = now;
    this.#store = store;
    const [kind, ...rest] = options.key.split(":");
    const arg = rest.join(":");
    this.#keyOf = kind === "header"
      ? (req) => req.readHeaders.get(arg) ?? NO_KEY
      : kind === "metadata"
      ? (req) => req.metadata[arg] ?? NO_KEY
      : (req) => req.metadata["client.ip"] ?? req.remoteAddr ?? NO_KEY;
  }

  onRequest(req: RequestEnvelope): Promise<void> | void {
    const key = this.#keyOf(req);
    const store = this.#store;
    if (!store) return this.#verdict(this.#takeLocal(key));
    // Known down: one request at a time asks whether it is back, the others do not wait.
    if (store.state.down && (this.#probing || !store.buckets.connected)) {
      return this.#fallback(store, key);
    }
    return this.#takeShared(store, key);
  }

  async #takeShared(store: SharedStore, key: string): Promise<void> {
    const probe = store.state.down;
    if (probe) this.#probing = true;
    let tokens: number;
    try {
      tokens = await store.buckets.take(key);
      store.state.succeeded();
    } catch (err) {
      store.state.failed(describe(err));
      return this.#fallback(store, key);
    } finally {
      if (probe) this.#probing = false;
    }
    this.#verdict(tokens);
  }

  #fallback(store: SharedStore, key: string): void {
    store.metrics?.storeError(this.name, store.policy);
    if (store.policy === "allow") return;
    if (store.policy === "local") return this.#verdict(this.#takeLocal(key));
    const err = new GatewayError(
      503,
      "rate_limit_unavailable",
      "the rate-limit store cannot be reached; retry in 1 s",
    );
    err.headers = { "retry-after": "1" };
    throw err;
  }

  #takeLocal(key: string): number {
    return this.#buckets.take(key, this.#now(), this.#rate, this.#burst);
  }

  /** Passes with a token, else throws 429 with the seconds until one is back. */
  #verdict(tokens: number): void {
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

  close(): void {
    this.#store?.buckets.close();
    this.#store?.state.close();
  }
}

function burstOf(options: RateLimitOptions): number {
  return options.burst ?? Math.max(1, Math.ceil(options.requests_per_second));
}

/** The password of a `redis` store: `redis_password`, or the first line of its file. */
async function redisPassword(
  options: RateLimitOptions,
  baseDir: string,
): Promise<string | undefined> {
  if (options.redis_password !== undefined) return options.redis_password;
  if (options.redis_password_file === undefined) return undefined;
  const file = resolve(baseDir, options.redis_password_file);
  const text = await readBounded(file, "redis_password_file");
  const password = text.split(/\r?\n/)[0].trim();
  if (password === "") throw new Error(`redis_password_file ${file} is empty`);
  return password;
}

/** A small file (a password, PEM certificates), with a clear error naming the option. */
async function readBounded(file: string, option: string): Promise<string> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(file);
  } catch (err) {
    throw new Error(`${option} ${file} cannot be read: ${(err as Error).message}`);
  }
  if (!info.isFile || info.size > 1024 * 1024) {
    throw new Error(`${option} ${file} is not a file of at most 1 MiB`);
  }
  return await Deno.readTextFile(file);
}

/** The Redis connection options of `options` (files read, paths resolved against `baseDir`). */
async function redisStoreOptions(
  options: RateLimitOptions,
  baseDir: string,
): Promise<RedisStoreOptions> {
  const pem = (path: string | undefined, option: string) =>
    path === undefined ? undefined : readBounded(resolve(baseDir, path), option);
  return {
    url: options.redis_url!,
    username: options.redis_username,
    password: await redisPassword(options, baseDir),
    ca: await pem(options.redis_ca_path, "redis_ca_path"),
    cert: await pem(options.redis_cert_path, "redis_cert_path"),
    key: await pem(options.redis_key_path, "redis_key_path"),
    timeoutMs: options.redis_timeout_ms ?? 100,
    keyPrefix: options.redis_key_prefix ?? "gateway:rate_limit:",
  };
}

/** Build a `rate_limit` middleware (options already checked by the config schema). */
export async function createRateLimitMiddleware(
  config: MiddlewareConfig,
  ctx: BuildContext,
): Promise<Middleware> {
  const options = config.options as unknown as RateLimitOptions;
  // One table for every worker: the build hands each the same shared memory under this name.
  const memory = ctx.sharedMemory?.(
    `middleware.${config.name}`,
    SharedBuckets.bytesFor(options.max_keys),
  );
  if (options.store !== "redis") {
    return new RateLimitMiddleware(config.name, options, Date.now, memory);
  }
  const redis = await redisStoreOptions(options, ctx.baseDir);
  const policy = options.on_store_error ?? "local";
  if (ctx.validateOnly) {
    // Checked (files read), but no connection is opened.
    return new RateLimitMiddleware(config.name, options, Date.now, memory);
  }
  const state = new StoreState(
    ctx.sharedMemory?.(`middleware.${config.name}.store`, STORE_STATE_BYTES) ??
      new SharedArrayBuffer(STORE_STATE_BYTES),
    {
      component: `rate_limit.${config.name}`,
      policy,
      logger: ctx.logger,
      health: ctx.health,
      // A worker of a gateway: the main thread (which has the health) reports.
      quiet: ctx.dataPlaneWorker === true,
    },
  );
  state.watch();
  // Loaded only for a Redis store: the client library reads the environment as it loads, which
  // `gateway audit verify` and `--validate-config` are not allowed to.
  const { RedisBuckets } = await import("./redis_buckets.ts");
  const buckets = new RedisBuckets(
    config.name,
    redis,
    options.requests_per_second / 1000,
    burstOf(options),
    {
      ready: () => state.succeeded(),
      // The connection dropped: requests decide by the policy at once, without waiting.
      lost: (reason) => state.failed(reason),
    },
  );
  // The first requests find the connection ready, unless Redis cannot be reached now.
  await buckets.opened;
  return new RateLimitMiddleware(config.name, options, Date.now, memory, {
    buckets,
    state,
    policy,
    metrics: ctx.metrics?.rateLimits,
  });
}
