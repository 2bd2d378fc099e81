/**
 * A budget of password checks per client address, spent before any hash runs: a token bucket per
 * address (`burst` checks at once, refilled at `perMinute`) in shared memory, so every data-plane
 * worker spends from the same bucket. An address with an empty bucket gets 429 with Retry-After
 * and costs no hashing. Only checks that hash spend: a remembered answer is free.
 */
import type { RequestEnvelope } from "../../envelope.ts";
import { SharedBuckets } from "../shared_buckets.ts";
import { tooManyChecks } from "./failures.ts";

/** The key of requests without an address (not from a socket): one shared bucket. */
const NO_ADDRESS = "\0none";

/** Password checks allowed per client address. */
export class CheckBudget {
  readonly #buckets: SharedBuckets;
  readonly #ratePerMs: number;
  readonly #burst: number;
  readonly #now: () => number;

  /** Bytes of the shared memory that holds `maxAddresses` buckets. */
  static bytesFor(maxAddresses: number): number {
    return SharedBuckets.bytesFor(maxAddresses);
  }

  /**
   * `memory` holds the buckets (bytesFor(maxAddresses) bytes, the same for every worker of the
   * gateway); absent, the budget has buckets of its own.
   */
  constructor(
    options: { perMinute: number; burst: number; maxAddresses: number },
    memory?: SharedArrayBuffer,
    now: () => number = Date.now,
  ) {
    this.#buckets = new SharedBuckets(
      memory ?? new SharedArrayBuffer(SharedBuckets.bytesFor(options.maxAddresses)),
      options.maxAddresses,
    );
    this.#ratePerMs = options.perMinute / 60_000;
    this.#burst = options.burst;
    this.#now = now;
  }

  /** Spends one check of the request's client address; throws 429 when none is left. */
  spend(req: RequestEnvelope): void {
    // The address ip_filter resolved through trusted proxies when one ran first, else the peer.
    const address = req.metadata["client.ip"] ?? req.remoteAddr ?? NO_ADDRESS;
    const tokens = this.#buckets.take(address, this.#now(), this.#ratePerMs, this.#burst);
    if (tokens >= 1) return;
    throw tooManyChecks(Math.max(1, Math.ceil((1 - tokens) / this.#ratePerMs / 1000)));
  }
}
