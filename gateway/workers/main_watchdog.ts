/**
 * The watchdog of the main thread. The main thread serves too (isolate 0) and holds the
 * management API, the audit file and the queues, so a frozen main thread cannot watch itself: a
 * small thread of its own (main_watchdog_worker.ts, no gateway modules) reads a heartbeat the main
 * thread writes into shared memory, logs a miss on standard error, and past `exitMs` ends the
 * process for its supervisor to restart. Only the `gateway` executable runs it: a program that
 * embeds the gateway keeps its process.
 */
import type { Logger } from "../../shared/mod.ts";
import type { Metrics } from "../observability/mod.ts";

/** The exit status of a process ended by the watchdog (EX_SOFTWARE). */
export const EXIT_CODE = 70;

/** The thresholds, in milliseconds. */
export interface MainWatchdogSettings {
  /** Silence after which the main thread is logged unresponsive. */
  missMs: number;
  /** Silence after which the process exits; 0: never. */
  exitMs: number;
}

/** What the main thread sends its watchdog thread. */
export interface MainWatchdogUpdate {
  /**
   * The heartbeat: a 32-bit counter the main thread moves on at each beat. The watchdog thread
   * times its changes on its own clock, so the two threads need not agree on the time.
   */
  beat: SharedArrayBuffer;
  settings: MainWatchdogSettings;
}

/** Milliseconds between beats (and between the watchdog thread's looks) for `missMs`. */
export function beatInterval(missMs: number): number {
  return Math.min(250, Math.max(10, missMs / 4));
}

const WORKER_MODULE = new URL("./main_watchdog_worker.ts", import.meta.url).href;

/** Main-thread watchdogs running in this process (the `gateway` executable runs one). */
let running = 0;

/**
 * True while a main-thread watchdog runs: the process is the `gateway` executable's, which the
 * watchdogs may end for its supervisor to restart; a program embedding the gateway runs none.
 */
export function watchdogOwnsProcess(): boolean {
  return running > 0;
}

/** The graceful end of the process, from the running watchdog's owner (see endOwnedProcess). */
let graceful: ((code: number) => void) | undefined;

/**
 * Ends the owned process with `code` for its supervisor to restart, when something other than a
 * frozen main thread asks (a worker thread that cannot be stopped): through the graceful end its
 * gateway gave (in-flight requests drained, audit and queues written, then the exit), else at once
 * with `immediate`.
 */
export function endOwnedProcess(code: number, immediate: (code: number) => void): void {
  if (graceful) graceful(code);
  else immediate(code);
}

/** Runs the main thread's watchdog thread and beats for it. */
export class MainWatchdog {
  readonly #logger: Logger;
  readonly #metrics: Metrics;
  readonly #buffer = new SharedArrayBuffer(4);
  readonly #beat = new Int32Array(this.#buffer);
  readonly #exitGracefully: ((code: number) => void) | undefined;
  #worker: Worker | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #interval = 0;

  /**
   * `exitGracefully` ends the process the normal way with a status, for {@link endOwnedProcess}
   * while this watchdog runs (a frozen main thread is still ended at once, by the thread).
   */
  constructor(
    deps: { logger: Logger; metrics: Metrics; exitGracefully?: (code: number) => void },
  ) {
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
    this.#exitGracefully = deps.exitGracefully;
  }

  /** Starts the watchdog thread, or gives it new thresholds (a reload). */
  configure(settings: MainWatchdogSettings): void {
    this.#tick();
    const interval = beatInterval(settings.missMs);
    if (interval !== this.#interval) {
      clearInterval(this.#timer);
      this.#interval = interval;
      this.#timer = setInterval(() => this.#tick(), interval);
    }
    if (!this.#worker) {
      running++;
      graceful = this.#exitGracefully;
      this.#worker = new Worker(WORKER_MODULE, { type: "module", name: "gateway-watchdog" });
      this.#worker.onmessage = (event: MessageEvent<{ type: "recovered"; silentMs: number }>) => {
        // Counted once the main thread runs again: nobody could scrape it meanwhile.
        this.#metrics.workers.unresponsive(0, true);
        this.#metrics.workers.unresponsive(0, false);
        this.#logger.warn("main thread was unresponsive", {
          worker: 0,
          silent_ms: event.data.silentMs,
        });
      };
      this.#worker.onerror = (event) => {
        event.preventDefault();
        this.#logger.error("main thread watchdog failed", { error: event.message });
      };
    }
    const update: MainWatchdogUpdate = { beat: this.#buffer, settings };
    this.#worker.postMessage(update);
  }

  /** Stops the beats and the thread. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#interval = 0;
    if (this.#worker) running--;
    if (this.#worker && graceful === this.#exitGracefully) graceful = undefined;
    this.#worker?.terminate();
    this.#worker = undefined;
  }

  #tick(): void {
    Atomics.add(this.#beat, 0, 1);
  }
}
