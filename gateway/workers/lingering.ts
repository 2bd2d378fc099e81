/**
 * Worker threads the watchdog terminated that still run. `Worker.terminate()` in Deno 2.9.5 does
 * not stop a thread that runs synchronous JavaScript: the thread goes on until its code returns to
 * the event loop (never, for a loop without end), holding a core and its heap after the pool has
 * replaced it. Each is followed by its kernel thread id (its /proc/self/task entry, through the C
 * library) until it ends; one still running `exitMs` after it was terminated ends the process for
 * its supervisor to restart, when the process is the gateway's own (else it is logged only).
 */
import type { Logger } from "../../shared/mod.ts";
import type { WorkerMetrics } from "../observability/mod.ts";
import { EXIT_CODE } from "./main_watchdog.ts";

/** A terminated thread that still runs, as `/{prefix}/workers` shows it. */
export interface LingeringThread {
  /** Its kernel thread id (`gettid(2)`). */
  thread_id: number;
  /** Milliseconds since it was terminated. */
  terminated_ms: number;
}

/** What the tracker reads and reports to. */
export interface LingeringDeps {
  logger: Logger;
  metrics: WorkerMetrics;
  /** True while thread `tid` runs, false once it has ended, undefined when it cannot be told. */
  running(tid: number): boolean | undefined;
  /** True when the process may be ended (the `gateway` executable's). */
  mayExit(): boolean;
  /** Ends the process with `code` (gracefully where its owner can, else at once). */
  exit(code: number): void;
}

interface Entry {
  index: number;
  tid: number;
  terminatedAt: number;
  /** Past the exit threshold and logged (an embedded gateway's process goes on). */
  overdue: boolean;
}

/** The terminated worker threads still running. */
export class LingeringThreads {
  readonly #deps: LingeringDeps;
  #entries: Entry[] = [];

  constructor(deps: LingeringDeps) {
    this.#deps = deps;
  }

  /** Thread `tid` of worker `index` was terminated now: followed until it ends. */
  add(index: number, tid: number): void {
    this.#entries.push({ index, tid, terminatedAt: performance.now(), overdue: false });
    this.#deps.metrics.lingering(this.#entries.length);
  }

  /** The threads of worker place `index` still running. */
  of(index: number): LingeringThread[] {
    const now = performance.now();
    return this.#entries.filter((e) => e.index === index).map((e) => ({
      thread_id: e.tid,
      terminated_ms: Math.round(now - e.terminatedAt),
    }));
  }

  /**
   * Looks at each thread (the watchdog's tick): an ended one is logged and forgotten; one running
   * past `exitMs` (0: never) ends the process, or is logged once when the process is not ours.
   */
  poll(exitMs: number): void {
    if (this.#entries.length === 0) return;
    const now = performance.now();
    const before = this.#entries.length;
    this.#entries = this.#entries.filter((e) => {
      const running = this.#deps.running(e.tid);
      const lingeredMs = Math.round(now - e.terminatedAt);
      if (running === false) {
        this.#deps.logger.info("terminated data-plane worker thread has ended", {
          worker: e.index,
          thread_id: e.tid,
          lingered_ms: lingeredMs,
        });
        return false;
      }
      // Unknown (no /proc any more) is not taken for running: no exit on a guess.
      if (running && exitMs > 0 && lingeredMs > exitMs && !e.overdue) this.#overdue(e, lingeredMs);
      return true;
    });
    if (this.#entries.length !== before) this.#deps.metrics.lingering(this.#entries.length);
  }

  #overdue(e: Entry, lingeredMs: number): void {
    e.overdue = true;
    const fields = {
      worker: e.index,
      thread_id: e.tid,
      lingered_ms: lingeredMs,
      reason:
        "Deno cannot stop a worker thread that runs synchronous JavaScript: it keeps a core " +
        "busy until its code returns; only a restart of the process takes it back",
    };
    if (!this.#deps.mayExit()) {
      this.#deps.logger.error(
        "terminated data-plane worker thread still runs; the process is not the gateway's to end",
        fields,
      );
      return;
    }
    this.#deps.logger.error(
      "terminated data-plane worker thread still runs: the process exits for its supervisor to " +
        "restart it",
      { ...fields, exit_code: EXIT_CODE },
    );
    this.#deps.exit(EXIT_CODE);
  }
}
