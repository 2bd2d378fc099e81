/**
 * The password workers of one isolate: up to {@link POOL_SIZE} module Workers
 * (password_worker.ts), each checking one password at a time, so that bcrypt and Argon2 never
 * run on a thread that serves requests. At most {@link MAX_WAITING} checks wait for a worker;
 * more are refused at once with 503 and Retry-After rather than queued without end.
 *
 * Lifetime: one pool per isolate (the main thread and each data-plane worker have their own),
 * shared by every `basic_auth` middleware of that isolate through leases. A middleware takes a
 * lease when it is built and returns it when its configuration generation is retired
 * (Middleware.close); the pool ends its workers when the last lease is returned, so a reload
 * (the new generation leases before the old one returns) keeps them. Workers start on the first
 * check and end after {@link IDLE_MS} without one, so an idle gateway holds no extra threads.
 */
import { busy } from "./failures.ts";

/** A check as posted to a password worker. */
export interface CheckRequest {
  id: number;
  password: string;
  hash: string;
}

/** A password worker's answer. */
export type CheckAnswer = { id: number; ok: boolean } | { id: number; error: string };

/**
 * Workers per isolate: 2, or 1 on a 2-core machine, as for rendering: the isolate's own thread
 * keeps a core for requests (measured in docs/decisions.md).
 */
export const POOL_SIZE = Math.max(1, Math.min(2, navigator.hardwareConcurrency - 1));
/** Checks waiting for a worker, per isolate. */
export const MAX_WAITING = 64;
/** A worker without a check for this long ends. */
const IDLE_MS = 30_000;

const WORKER_MODULE = new URL("./password_worker.ts", import.meta.url).href;

/** Checks a password against a hash somewhere other than the calling thread. */
export interface PasswordVerifier {
  /** True when `password` matches `hash`; rejects with 503 when too many checks wait. */
  verify(password: string, hash: string): Promise<boolean>;
}

interface Check {
  request: CheckRequest;
  resolve: (ok: boolean) => void;
  reject: (err: unknown) => void;
}

/** One worker thread and the check it is running. */
class PasswordThread {
  readonly #worker: Worker;
  #current: Check | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly onFree: (t: PasswordThread) => void,
    readonly onGone: (t: PasswordThread) => void,
  ) {
    this.#worker = new Worker(WORKER_MODULE, { type: "module", name: "password-check" });
    this.#worker.onmessage = (e: MessageEvent<CheckAnswer>) => this.#answer(e.data);
    this.#worker.onerror = (e) => {
      e.preventDefault();
      this.#fail(new Error(`password worker failed: ${e.message}`));
    };
  }

  get busy(): boolean {
    return this.#current !== undefined;
  }

  run(check: Check): void {
    clearTimeout(this.#idle);
    this.#current = check;
    this.#worker.postMessage(check.request);
  }

  terminate(reason: Error): void {
    clearTimeout(this.#idle);
    this.#worker.terminate();
    const check = this.#current;
    this.#current = undefined;
    check?.reject(reason);
  }

  #answer(answer: CheckAnswer): void {
    const check = this.#current;
    if (!check || check.request.id !== answer.id) return;
    this.#current = undefined;
    if ("ok" in answer) check.resolve(answer.ok);
    else check.reject(new Error(`password check failed: ${answer.error}`));
    this.#idle = setTimeout(() => this.onGone(this), IDLE_MS);
    this.onFree(this);
  }

  /** The worker broke: its check fails, and the pool starts another worker when needed. */
  #fail(err: Error): void {
    this.terminate(err);
    this.onGone(this);
  }
}

/** A pool of password workers with a bounded queue. */
export class PasswordPool implements PasswordVerifier {
  readonly #size: number;
  readonly #maxWaiting: number;
  readonly #threads: PasswordThread[] = [];
  readonly #waiting: Check[] = [];
  #nextId = 1;
  #closed = false;

  constructor(size = POOL_SIZE, maxWaiting = MAX_WAITING) {
    this.#size = Math.max(1, size);
    this.#maxWaiting = maxWaiting;
  }

  /** Worker threads running now (started on demand, ended when idle). */
  get threads(): number {
    return this.#threads.length;
  }

  verify(password: string, hash: string): Promise<boolean> {
    if (this.#closed) return Promise.reject(new Error("the password pool is closed"));
    const thread = this.#threads.find((t) => !t.busy) ?? this.#start();
    if (!thread && this.#waiting.length >= this.#maxWaiting) return Promise.reject(busy());
    return new Promise((resolve, reject) => {
      const check = { request: { id: this.#nextId++, password, hash }, resolve, reject };
      if (thread) thread.run(check);
      else this.#waiting.push(check);
    });
  }

  /** Ends every worker; checks running or waiting fail. */
  close(): void {
    this.#closed = true;
    const reason = new Error("the password pool is closed");
    for (const t of this.#threads.splice(0)) t.terminate(reason);
    for (const c of this.#waiting.splice(0)) c.reject(reason);
  }

  #start(): PasswordThread | undefined {
    if (this.#threads.length >= this.#size) return undefined;
    const thread = new PasswordThread((t) => this.#free(t), (t) => this.#gone(t));
    this.#threads.push(thread);
    return thread;
  }

  #free(thread: PasswordThread): void {
    const next = this.#waiting.shift();
    if (next) thread.run(next);
  }

  #gone(thread: PasswordThread): void {
    const i = this.#threads.indexOf(thread);
    if (i < 0) return;
    this.#threads.splice(i, 1);
    thread.terminate(new Error("password worker ended"));
    // A broken worker leaves its place to a new one if checks are waiting.
    const next = this.#waiting.shift();
    if (next) this.#start()!.run(next);
  }
}

/** A hold on the isolate's pool; `release` once, when the holder is retired. */
export interface PasswordPoolLease extends PasswordVerifier {
  /** Returns the lease; the last one returned ends the pool's workers. */
  release(): void;
}

let shared: PasswordPool | undefined;
let leases = 0;

/** A lease on this isolate's password pool (made on the first lease, ended after the last). */
export function leasePasswordPool(): PasswordPoolLease {
  shared ??= new PasswordPool();
  const pool = shared;
  leases++;
  let released = false;
  return {
    verify: (password, hash) => pool.verify(password, hash),
    release() {
      if (released) return;
      released = true;
      if (--leases === 0 && shared === pool) {
        shared = undefined;
        pool.close();
      }
    },
  };
}
