/**
 * JOLT previews off the service's event loop: a small pool of module Workers (worker.ts), started
 * on first use, each running one preview at a time. A preview that passes its deadline is answered
 * 422 `preview_deadline_exceeded` and its worker terminated; the next preview gets a fresh worker.
 * (Deno 2.9.5's `terminate()` does not stop synchronous JavaScript: the old worker's thread runs on
 * until its run ends, which the engine's work and output budgets bound to about half a second, and
 * no `split` separator can backtrack: docs/transforms.md.) At most
 * {@link MAX_WAITING} previews wait for a worker, more are refused (503 `preview_busy`). Workers
 * idle for {@link IDLE_MS} end, so an idle service holds no extra threads.
 *
 * Where a worker cannot be started at all (a platform without Workers, or the worker's module not
 * readable), previews run in the service's own isolate, bounded by the engine's work budget only.
 */
import type { Logger } from "../../shared/mod.ts";
import { PreviewLimitError } from "./errors.ts";
import { type PreviewOutcome, runPreview } from "./run.ts";
import type { PreviewJob, PreviewReply } from "./worker.ts";

/** How long one preview may run in its worker, unless the service says otherwise. */
export const PREVIEW_DEADLINE_MS = 1_000;
/** Previews that may wait for a worker. */
export const MAX_WAITING = 16;
/** A worker without work for this long ends. */
export const IDLE_MS = 60_000;
/** A worker that has not loaded its module by then counts as failed to start. */
const START_TIMEOUT_MS = 30_000;
const WORKER_URL = new URL("./worker.ts", import.meta.url).href;

/** Options of a {@link PreviewPool}. */
export interface PreviewPoolOptions {
  /** Deadline of one preview, ms ({@link PREVIEW_DEADLINE_MS}). */
  deadlineMs?: number;
  /** Most workers at once (default: one fewer than the cores, at least 1, at most 2). */
  workers?: number;
  /** Where the pool says that it runs previews in-isolate. */
  logger?: Logger;
}

interface Waiting {
  job: PreviewJob;
  deadlineMs: number;
  resolve: (outcome: PreviewOutcome) => void;
  reject: (err: unknown) => void;
}

/** One worker and the preview it runs. */
class PreviewWorker {
  readonly #worker: Worker;
  /** Settles once the worker has loaded (rejects when it cannot). */
  readonly ready: Promise<void>;
  #current: { resolve: (o: PreviewOutcome) => void; reject: (e: unknown) => void } | null = null;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #dead = false;
  /** Settles `ready` with a failure, until it has settled. */
  #notStarted: ((err: Error) => void) | null = null;

  constructor() {
    this.#worker = new Worker(WORKER_URL, { type: "module" });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          this.#fail(new Error(`the preview worker did not start within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      this.#notStarted = (err) => {
        clearTimeout(timer);
        this.#notStarted = null;
        reject(err);
      };
      this.#worker.onmessage = (e: MessageEvent<PreviewReply>) => {
        if ("ready" in e.data) {
          clearTimeout(timer);
          this.#notStarted = null;
          resolve();
        } else this.#answer(e.data);
      };
      this.#worker.onerror = (e) => {
        e.preventDefault();
        this.#fail(new Error(`the preview worker failed: ${e.message}`));
      };
    });
    this.ready.catch(() => {}); // whoever runs a job on it sees the failure
  }

  /** False once terminated (by a deadline, a failure, idleness or the pool's close). */
  get alive(): boolean {
    return !this.#dead;
  }

  /** Runs `job`; past `deadlineMs` the worker is terminated and the preview refused. */
  run(job: PreviewJob, deadlineMs: number): Promise<PreviewOutcome> {
    clearTimeout(this.#idle);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() =>
        this.#fail(
          new PreviewLimitError(
            "preview_deadline_exceeded",
            `the preview ran past its deadline of ${deadlineMs} ms and was stopped: ` +
              "the spec does too much work on this sample",
            { deadline_ms: deadlineMs },
          ),
        ), deadlineMs);
      this.#current = {
        resolve: (o) => (clearTimeout(timer), resolve(o)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      try {
        this.#worker.postMessage(job);
      } catch (err) {
        // A sample that cannot be cloned (too deep): nothing was sent, the worker stays usable.
        this.#current = null;
        clearTimeout(timer);
        reject(err);
      }
    });
  }

  /** Ends the worker after `ms` without a job, then calls `onEnd`. */
  idleFor(ms: number, onEnd: () => void): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      this.terminate();
      onEnd();
    }, ms);
  }

  /** Ends the worker at once; a preview it was running (or its start) is refused. */
  terminate(): void {
    this.#fail(new Error("the preview worker was stopped"));
  }

  /** Ends the worker, refusing its start and its preview with `err`. */
  #fail(err: Error): void {
    clearTimeout(this.#idle);
    if (this.#dead) return;
    this.#dead = true;
    this.#worker.terminate();
    this.#notStarted?.(err);
    const current = this.#current;
    this.#current = null;
    current?.reject(err);
  }

  #answer(reply: PreviewReply): void {
    const current = this.#current;
    this.#current = null;
    if (!current) return;
    if ("outcome" in reply) current.resolve(reply.outcome);
    else if ("failure" in reply) current.reject(new Error(`preview failed: ${reply.failure}`));
  }
}

/** Runs previews in workers with a deadline (see the module comment). */
export class PreviewPool {
  readonly #deadlineMs: number;
  readonly #max: number;
  readonly #logger: Logger | undefined;
  readonly #idle: PreviewWorker[] = [];
  readonly #all = new Set<PreviewWorker>();
  readonly #waiting: Waiting[] = [];
  #inIsolate = false;
  #closed = false;

  /** A pool that starts no worker before the first preview. */
  constructor(options: PreviewPoolOptions = {}) {
    this.#deadlineMs = options.deadlineMs ?? PREVIEW_DEADLINE_MS;
    this.#max = options.workers ??
      Math.max(1, Math.min(2, (navigator.hardwareConcurrency ?? 2) - 1));
    this.#logger = options.logger;
  }

  /** The deadline of one preview, ms. */
  get deadlineMs(): number {
    return this.#deadlineMs;
  }

  /** True when previews run in the service's isolate because no worker could start. */
  get inIsolate(): boolean {
    return this.#inIsolate;
  }

  /**
   * Runs a preview of `spec` on `input`. Rejects with PreviewLimitError past the deadline (the
   * pool's, or `options.deadlineMs` for this preview) or when too many wait, and with an Error when
   * the preview fails in an unexpected way.
   */
  run(
    spec: unknown,
    input: unknown,
    options: { deadlineMs?: number } = {},
  ): Promise<PreviewOutcome> {
    if (this.#closed) return Promise.reject(new Error("the preview pool is closed"));
    if (this.#inIsolate) return this.#runHere({ spec, input });
    if (this.#waiting.length >= MAX_WAITING) {
      return Promise.reject(
        new PreviewLimitError(
          "preview_busy",
          `${MAX_WAITING} previews are waiting already: try again in a second`,
          { retry_after_s: 1 },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const deadlineMs = options.deadlineMs ?? this.#deadlineMs;
      this.#waiting.push({ job: { spec, input }, deadlineMs, resolve, reject });
      this.#dispatch();
    });
  }

  /** Ends every worker and refuses what waits (at shutdown). */
  close(): void {
    this.#closed = true;
    for (const w of this.#all) w.terminate();
    this.#all.clear();
    this.#idle.length = 0;
    for (const w of this.#waiting.splice(0)) w.reject(new Error("the preview pool is closed"));
  }

  #dispatch(): void {
    while (this.#waiting.length > 0 && !this.#closed) {
      let worker = this.#idle.pop();
      if (worker === undefined) {
        if (this.#all.size >= this.#max) return;
        try {
          worker = new PreviewWorker();
        } catch (err) {
          this.#fallBack(err);
          return;
        }
        this.#all.add(worker);
      }
      void this.#execute(worker, this.#waiting.shift()!);
    }
  }

  async #execute(worker: PreviewWorker, waiting: Waiting): Promise<void> {
    try {
      await worker.ready;
    } catch (err) {
      this.#all.delete(worker);
      if (this.#closed) return waiting.reject(err);
      // Not even one worker starts here: previews stay in this isolate from now on.
      this.#waiting.unshift(waiting);
      this.#fallBack(err);
      return;
    }
    try {
      waiting.resolve(await worker.run(waiting.job, waiting.deadlineMs));
    } catch (err) {
      waiting.reject(err);
    }
    if (worker.alive && !this.#closed) {
      this.#idle.push(worker);
      worker.idleFor(IDLE_MS, () => this.#forget(worker));
    } else {
      this.#all.delete(worker);
    }
    this.#dispatch();
  }

  #forget(worker: PreviewWorker): void {
    this.#all.delete(worker);
    const i = this.#idle.indexOf(worker);
    if (i >= 0) this.#idle.splice(i, 1);
  }

  /** From now on previews run in this isolate; what waits runs now. */
  #fallBack(err: unknown): void {
    if (!this.#inIsolate) {
      this.#logger?.warn(
        "JOLT previews run in the service's isolate: no worker can be started here " +
          "(they are bounded by the engine's work budget only, without a deadline)",
        { error: err instanceof Error ? err.message : String(err) },
      );
    }
    this.#inIsolate = true;
    for (const w of this.#waiting.splice(0)) this.#runHere(w.job).then(w.resolve, w.reject);
  }

  #runHere(job: PreviewJob): Promise<PreviewOutcome> {
    try {
      return Promise.resolve(runPreview(job.spec, job.input));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
