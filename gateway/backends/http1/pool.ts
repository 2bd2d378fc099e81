/** Idle keep-alive connections per origin, closed after an idle timeout. */

import type { Connection } from "./connection.ts";

/** Keeps up to `maxIdle` idle connections per origin, most recently used first out. */
export class Pool {
  readonly #maxIdle: number;
  readonly #idleTimeoutMs: number;
  readonly #idle = new Map<string, Connection[]>();
  #count = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(maxIdle: number, idleTimeoutMs: number) {
    this.#maxIdle = maxIdle;
    this.#idleTimeoutMs = idleTimeoutMs;
  }

  /** Number of idle connections (all origins). */
  get size(): number {
    return this.#count;
  }

  /** An idle connection to `origin`, or undefined. */
  take(origin: string): Connection | undefined {
    const list = this.#idle.get(origin);
    if (list === undefined) return undefined;
    while (list.length > 0) {
      const conn = list.pop()!;
      this.#count--;
      conn.idle = false;
      if (!conn.closed) return conn;
    }
    return undefined;
  }

  /** Keeps `conn` for reuse, or closes it when the pool is full or closed. */
  put(conn: Connection): void {
    if (this.#closed || conn.closed) return conn.destroy();
    let list = this.#idle.get(conn.origin);
    if (list === undefined) this.#idle.set(conn.origin, list = []);
    if (list.length >= this.#maxIdle) return conn.destroy();
    conn.idleSince = Date.now();
    list.push(conn);
    this.#count++;
    conn.watch(this.#drop);
    if (this.#timer === undefined) {
      // One sweep timer for all sockets: cheaper than a timer per release.
      const every = Math.max(5, Math.min(1000, this.#idleTimeoutMs / 2));
      const timer = setInterval(this.#sweep, every);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
  }

  // The server closed an idle socket (or sent something unasked): forget and close it.
  readonly #drop = (conn: Connection): void => {
    const list = this.#idle.get(conn.origin);
    const index = list?.indexOf(conn) ?? -1;
    if (index !== -1) {
      list!.splice(index, 1);
      this.#count--;
    }
    conn.destroy();
  };

  readonly #sweep = (): void => {
    const oldest = Date.now() - this.#idleTimeoutMs;
    for (const [origin, list] of this.#idle) {
      // The list is in release order, so expired sockets are at its front.
      let expired = 0;
      while (expired < list.length && list[expired].idleSince <= oldest) {
        list[expired].destroy();
        expired++;
      }
      if (expired > 0) {
        list.splice(0, expired);
        this.#count -= expired;
      }
      if (list.length === 0) this.#idle.delete(origin);
    }
    if (this.#count === 0) this.#stopTimer();
  };

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Closes every idle connection and refuses new ones; resolves when their reads have settled. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopTimer();
    const reads: Promise<unknown>[] = [];
    for (const list of this.#idle.values()) {
      for (const conn of list) {
        conn.destroy();
        if (conn.watching) reads.push(conn.watching);
      }
    }
    this.#idle.clear();
    this.#count = 0;
    await Promise.all(reads);
  }
}
