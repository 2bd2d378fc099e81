/**
 * The heartbeat of the data-plane worker threads (Envoy's watchdog is the model): the main thread
 * pings every watched worker a few times per miss threshold, and a worker's event loop answers at
 * once. One that has not answered for `missMs` is reported missed (and recovered when it answers
 * again); past `killMs` it is handed to `kill` and no longer watched. Its tick also paces the
 * pool's look at the threads it terminated (lingering.ts).
 */

/** One watched isolate. */
export interface Watched {
  /** Sends heartbeat `seq`; the isolate answers it whenever its event loop runs. */
  ping(seq: number): void;
}

/** The thresholds, in milliseconds. */
export interface WatchdogSettings {
  /** Silence after which an isolate is unresponsive. */
  missMs: number;
  /** Silence after which it is killed; 0: never. A value below `missMs` counts as `missMs`. */
  killMs: number;
}

/** What the watchdog reports. */
export interface WatchdogEvents<T> {
  /** `w` has not answered for `silentMs`, past `missMs`. */
  missed(w: T, silentMs: number): void;
  /** `w` answers again, after `silentMs` of silence. */
  recovered(w: T, silentMs: number): void;
  /** `w` has not answered for `silentMs`, past `killMs`; it is no longer watched. */
  kill(w: T, silentMs: number): void;
  /** Each round of heartbeats, after the isolates were judged (for other periodic looks). */
  tick?(): void;
}

/** The heartbeat state of one isolate. */
interface Beat {
  /** Set by its first answer: a thread still loading its modules is not judged. */
  armed: boolean;
  lastAnswer: number;
  missed: boolean;
}

/** Pings every 1/4 of the miss threshold, within these bounds. */
const MIN_INTERVAL_MS = 25;
const MAX_INTERVAL_MS = 500;

/** Watches isolates by their heartbeats. */
export class Watchdog<T extends Watched> {
  readonly #events: WatchdogEvents<T>;
  readonly #beats = new Map<T, Beat>();
  #settings: WatchdogSettings | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #interval = MAX_INTERVAL_MS;
  #lastTick = 0;
  #seq = 0;

  constructor(events: WatchdogEvents<T>) {
    this.#events = events;
  }

  /** Starts watching with `settings`, or takes new ones (a reload). */
  configure(settings: WatchdogSettings): void {
    this.#settings = settings;
    const interval = Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, settings.missMs / 4));
    if (this.#timer !== undefined && interval === this.#interval) return;
    clearInterval(this.#timer);
    this.#interval = interval;
    this.#lastTick = performance.now();
    this.#timer = setInterval(() => this.#tick(), interval);
  }

  /** Stops the heartbeats. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Watches `w` from its first answer on. */
  watch(w: T): void {
    this.#beats.set(w, { armed: false, lastAnswer: performance.now(), missed: false });
  }

  /** Stops watching `w` (it failed or was replaced). */
  forget(w: T): void {
    this.#beats.delete(w);
  }

  /** `w` answered a heartbeat. */
  answered(w: T): void {
    const beat = this.#beats.get(w);
    if (!beat) return;
    const now = performance.now();
    const silent = now - beat.lastAnswer;
    beat.armed = true;
    beat.lastAnswer = now;
    if (beat.missed) {
      beat.missed = false;
      this.#events.recovered(w, silent);
    }
  }

  /** True while `w` is past the miss threshold. */
  unresponsive(w: T): boolean {
    return this.#beats.get(w)?.missed ?? false;
  }

  /** Milliseconds since `w` last answered; undefined before its first answer. */
  silence(w: T): number | undefined {
    const beat = this.#beats.get(w);
    return beat?.armed ? performance.now() - beat.lastAnswer : undefined;
  }

  #tick(): void {
    const settings = this.#settings!;
    const now = performance.now();
    const late = now - this.#lastTick - this.#interval;
    this.#lastTick = now;
    // This thread was the one held up (a long task, a GC pause): the answers may be waiting in
    // its queue, so the time it lost does not count against the workers.
    if (late > settings.missMs / 2) {
      for (const beat of this.#beats.values()) beat.lastAnswer += late;
    }
    const seq = ++this.#seq;
    const killMs = settings.killMs > 0 ? Math.max(settings.killMs, settings.missMs) : Infinity;
    for (const [w, beat] of [...this.#beats]) {
      w.ping(seq);
      if (!beat.armed) continue;
      const silent = now - beat.lastAnswer;
      if (!beat.missed && silent > settings.missMs) {
        beat.missed = true;
        this.#events.missed(w, silent);
      }
      if (beat.missed && silent > killMs) {
        this.#beats.delete(w);
        this.#events.kill(w, silent);
      }
    }
    this.#events.tick?.();
  }
}
