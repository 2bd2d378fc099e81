/**
 * The receivers of an `hl7` backend: `host:port` and its `failover` list, each with its own
 * connection pool. A receiver that could not be connected to is passed over for a cool-down; the
 * order to try is the configured one, receivers in cool-down last (so that when all are down the
 * first to come back is found).
 */
import type { ConnectSettings } from "./connection.ts";
import { ConnectionPool, type PoolSettings } from "./pool.ts";

/** One receiver and its pool. */
export interface Destination {
  /** `host:port` as configured, for messages. */
  peer: string;
  /** Its connections. */
  pool: ConnectionPool;
  /** `performance.now()` until which it is passed over. */
  downUntil: number;
}

/** Host and port of `host:port` or `[v6]:port`. */
export function splitHostPort(value: string): { hostname: string; port: number } {
  const at = value.lastIndexOf(":");
  const host = value.slice(0, at);
  return {
    hostname: host.startsWith("[") ? host.slice(1, -1) : host,
    port: Number(value.slice(at + 1)),
  };
}

/** The receivers of one backend. */
export class Destinations {
  readonly #all: Destination[];
  readonly #cooldownMs: number;

  /** `peers` in preference order; `connect` the settings they share (TLS, limits). */
  constructor(
    peers: string[],
    connect: Omit<ConnectSettings, "hostname" | "port">,
    pool: PoolSettings,
    cooldownMs: number,
  ) {
    this.#cooldownMs = cooldownMs;
    this.#all = peers.map((peer) => ({
      peer,
      pool: new ConnectionPool({ ...connect, ...splitHostPort(peer) }, pool),
      downUntil: 0,
    }));
  }

  /** The receivers to try, in order. */
  order(now = performance.now()): Destination[] {
    if (this.#all.length === 1) return this.#all;
    const up = this.#all.filter((d) => d.downUntil <= now);
    return up.length === this.#all.length
      ? this.#all
      : [...up, ...this.#all.filter((d) => d.downUntil > now)];
  }

  /** `d` could not be connected to: pass it over for the cool-down. */
  failed(d: Destination): void {
    d.downUntil = performance.now() + this.#cooldownMs;
  }

  /** `d` took a connection: it is up. */
  succeeded(d: Destination): void {
    d.downUntil = 0;
  }

  /** Connections opened so far, over all receivers. */
  get opened(): number {
    return this.#all.reduce((n, d) => n + d.pool.opened, 0);
  }

  /** Closes every pool's idle connections. */
  close(): void {
    for (const d of this.#all) d.pool.close();
  }
}
