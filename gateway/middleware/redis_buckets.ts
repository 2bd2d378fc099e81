/**
 * Token buckets in Redis, so that every gateway of a cluster takes from the same bucket of a key
 * (`rate_limit` with `store = "redis"`). One Lua script refills and takes atomically on the
 * server, with the server's clock (so the gateways' clocks do not matter); ioredis sends it with
 * EVALSHA (EVAL once after a server restart forgot it) and pipelines the commands of concurrent
 * requests into one write, so a request costs one round trip.
 *
 * One connection per store (per middleware and isolate), opened at build and kept: commands are
 * never queued while it is down (they fail at once), each has `timeoutMs` to be answered, and the
 * client reconnects in the background with a growing pause. The caller decides what a failure
 * means (`on_store_error`).
 */
import { createHash } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import { describe } from "./store_state.ts";

/**
 * Refill to the server's time at ARGV[1] tokens per ms up to ARGV[2], take one when there is one,
 * keep the bucket ARGV[3] ms after its last use. Returns the tokens before taking, as a string
 * (a Lua number would be cut to an integer).
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = burst
if held[1] and held[2] then
  local elapsed = now - tonumber(held[2])
  if elapsed < 0 then elapsed = 0 end
  tokens = math.min(burst, tonumber(held[1]) + elapsed * rate)
end
local left = tokens
if tokens >= 1 then left = tokens - 1 end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', left), 'at', now)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return string.format('%.17g', tokens)
`;

/** Longest time a bucket is kept unused (a full refill takes longer only at tiny rates). */
const MAX_TTL_MS = 7 * 24 * 3600 * 1000;
/** Longest pause between reconnection attempts. */
const MAX_RECONNECT_MS = 2_000;

/** Where and how to reach Redis. */
export interface RedisStoreOptions {
  /** `redis://host:port[/db]` or `rediss://...` (TLS). */
  url: string;
  username?: string;
  password?: string;
  /** PEM text of the CAs, the client certificate and its key (TLS). */
  ca?: string;
  cert?: string;
  key?: string;
  /** Longest wait for an answer (and for a connection). */
  timeoutMs: number;
  /** Put before every key. */
  keyPrefix: string;
}

/** What the store tells its owner about its connection (logged once per change by the owner). */
export interface RedisStoreEvents {
  /** The connection is ready (again). */
  ready?(): void;
  /** The connection failed or closed; `reason` names why (never a credential). */
  lost?(reason: string): void;
}

/** The connection options ioredis gets for `options` (exported for tests). */
export function redisOptions(options: RedisStoreOptions): RedisOptions {
  const url = new URL(options.url);
  const tls = url.protocol === "rediss:";
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return {
    host,
    port: url.port ? Number(url.port) : 6379,
    db,
    username: options.username,
    password: options.password,
    tls: tls
      ? {
        servername: /^[\d.]+$|:/.test(host) ? undefined : host,
        ca: options.ca,
        cert: options.cert,
        key: options.key,
      }
      : undefined,
    connectTimeout: Math.max(options.timeoutMs, 1_000),
    commandTimeout: options.timeoutMs,
    // Fail at once while disconnected instead of holding requests in a queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), MAX_RECONNECT_MS),
    // A READONLY replica after a failover: reconnect (to the new primary behind the name).
    reconnectOnError: (err) => err.message.startsWith("READONLY"),
    lazyConnect: true,
  };
}

/** The buckets of one `rate_limit` middleware in Redis. */
export class RedisBuckets {
  readonly #client: Redis;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #rate: string;
  readonly #burst: string;
  #closed = false;

  /**
   * Opens the connection to Redis in the background (`take` fails until it is ready). The
   * buckets refill at `ratePerMs` up to `burst`; `name` (the middleware's) is part of every key.
   */
  constructor(
    name: string,
    options: RedisStoreOptions,
    ratePerMs: number,
    burst: number,
    events: RedisStoreEvents = {},
  ) {
    this.#prefix = `${options.keyPrefix}${name}:`;
    this.#rate = String(ratePerMs);
    this.#burst = String(burst);
    this.#ttlMs = Math.min(MAX_TTL_MS, Math.ceil(burst / ratePerMs) + 1_000);
    this.#client = new Redis(redisOptions(options));
    this.#client.defineCommand("gatewayTakeToken", { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.#client.on("ready", () => events.ready?.());
    // ioredis reports each failed attempt; the owner logs only changes of state.
    this.#client.on("error", (err: Error) => events.lost?.(describe(err)));
    this.#client.on("close", () => {
      if (!this.#closed) events.lost?.("connection closed");
    });
    this.opened = this.#client.connect().then(() => true, () => false);
  }

  /**
   * Settles once the first connection attempt ended: true when it is ready. A failed attempt is
   * reported through `events.lost`, and the client keeps trying in the background.
   */
  readonly opened: Promise<boolean>;

  /** True while the connection is ready for commands. */
  get connected(): boolean {
    return this.#client.status === "ready";
  }

  /**
   * Refills `key`'s bucket and takes one token when there is one; the tokens it held before
   * (at least 1: the request passes). Rejects when Redis does not answer in time or errs.
   */
  async take(key: string): Promise<number> {
    const id = createHash("sha256").update(key).digest("hex").slice(0, 32);
    const client = this.#client as Redis & {
      gatewayTakeToken(key: string, rate: string, burst: string, ttl: string): Promise<string>;
    };
    const answer = await client.gatewayTakeToken(
      this.#prefix + id,
      this.#rate,
      this.#burst,
      String(this.#ttlMs),
    );
    const tokens = Number(answer);
    if (!Number.isFinite(tokens)) throw new Error(`unexpected answer from Redis: ${answer}`);
    return tokens;
  }

  /** Closes the connection (commands in flight fail). */
  close(): void {
    this.#closed = true;
    this.#client.disconnect(false);
  }
}
