/**
 * The feed of finished requests: what the operations console's live tail shows, and the last
 * error of each pipeline on its dashboard. One per isolate (`requestFeed`), like the isolate's
 * memory budget. Publishing costs one property read while nobody watches: the front door builds
 * an event only when `watched` is true. A data-plane worker's feed forwards its events to the
 * main thread (gateway/workers) while the main thread says that someone watches there.
 */

/** One request (or DIMSE operation, or HL7 message) that left its pipeline. */
export interface RequestEvent {
  /** ISO 8601 time of its end. */
  at: string;
  request_id: string;
  pipeline: string;
  /** The status the pipeline ended with (HTTP; 200 or 502 for DIMSE; 200/4xx/5xx for HL7). */
  status: number;
  duration_ms: number;
  /** The failure's code, if any. */
  error_code?: string;
  /**
   * What the access log line says of it (method or operation, path as logged, endpoint, backend,
   * calling AE, HL7 message type): never a body, never a query string.
   */
  fields: Record<string, string>;
  /** The isolate that served it (0: the main thread). */
  worker: number;
}

/** The latest failure of a pipeline. */
export interface PipelineError {
  pipeline: string;
  /** ISO 8601. */
  at: string;
  status: number;
  code: string;
  /** The message the client was given (never the internal detail). */
  message: string;
  request_id: string;
}

/** Access-log fields a tail event carries (strings and numbers only). */
const EVENT_FIELDS = [
  "method",
  "operation",
  "path",
  "endpoint",
  "backend",
  "calling_aet",
  "message_type",
  "trigger_event",
  "ack",
] as const;

/** Most pipelines whose last error is kept (a bound, not a limit any gateway reaches). */
const MAX_PIPELINES = 1000;

/** This isolate's index: 0 for the main thread, N for `gateway-worker-N`. */
function isolateIndex(): number {
  const name = (globalThis as { name?: string }).name ?? "";
  return Number(/^gateway-worker-(\d+)$/.exec(name)?.[1] ?? 0);
}

/** Publishes finished requests to whoever watches, and keeps each pipeline's last error. */
export class RequestFeed {
  readonly #listeners = new Set<(event: RequestEvent) => void>();
  readonly #watchers = new Set<(watched: boolean) => void>();
  readonly #lastErrors = new Map<string, PipelineError>();
  /** Errors not yet handed to the main thread (a worker's feed). */
  #unsent = new Map<string, PipelineError>();
  /** A worker's way to the main thread, and whether someone watches there. */
  #forward: ((events: RequestEvent[]) => void) | undefined;
  #remoteWatched = false;
  #batch: RequestEvent[] = [];
  readonly worker = isolateIndex();

  /** True while a finished request should be published (someone watches). */
  get watched(): boolean {
    return this.#listeners.size > 0 || this.#remoteWatched;
  }

  /** Listeners now. */
  get listeners(): number {
    return this.#listeners.size;
  }

  /** Hears every published event until the returned function is called. */
  subscribe(listener: (event: RequestEvent) => void): () => void {
    const before = this.watched;
    this.#listeners.add(listener);
    if (!before) this.#notify(true);
    return () => {
      if (!this.#listeners.delete(listener)) return;
      if (!this.watched) this.#notify(false);
    };
  }

  /** Hears when `watched` changes (the main thread tells its workers). */
  onWatched(watcher: (watched: boolean) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  /**
   * A worker's feed: events go to `forward` in batches (one per turn of the event loop) while
   * the main thread says someone watches (`remoteWatched`).
   */
  forwardTo(forward: (events: RequestEvent[]) => void): void {
    this.#forward = forward;
  }

  /** The main thread says whether someone watches (a worker's feed). */
  set remoteWatched(on: boolean) {
    this.#remoteWatched = on;
    if (!on) this.#batch = [];
  }

  /** Builds and publishes the event of a finished request (callers check `watched` first). */
  finished(
    requestId: string,
    pipeline: string,
    status: number,
    durationMs: number,
    errorCode: string | undefined,
    fields: Record<string, unknown>,
  ): void {
    const picked: Record<string, string> = {};
    for (const key of EVENT_FIELDS) {
      const v = fields[key];
      if (typeof v === "string" || typeof v === "number") picked[key] = String(v).slice(0, 512);
    }
    this.publish({
      at: new Date().toISOString(),
      request_id: requestId,
      pipeline,
      status,
      duration_ms: durationMs,
      ...(errorCode ? { error_code: errorCode } : {}),
      fields: picked,
      worker: this.worker,
    });
  }

  /** Hands an event to the listeners here, and to the main thread from a worker. */
  publish(event: RequestEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the request path never sees it.
      }
    }
    if (this.#remoteWatched && this.#forward) {
      this.#batch.push(event);
      if (this.#batch.length === 1) queueMicrotask(() => this.#flush());
    }
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    if (batch.length && this.#forward) this.#forward(batch);
  }

  /** A request failed: it is its pipeline's last error (cheap: failures only). */
  failed(error: PipelineError): void {
    if (!this.#lastErrors.has(error.pipeline) && this.#lastErrors.size >= MAX_PIPELINES) return;
    this.#lastErrors.set(error.pipeline, error);
    if (this.#forward) this.#unsent.set(error.pipeline, error);
  }

  /** Each pipeline's last error here (the main thread: of every isolate, as of the last collect). */
  lastErrors(): PipelineError[] {
    return [...this.#lastErrors.values()];
  }

  /** The errors since the last call (a worker sends them with its metrics). */
  takeUnsentErrors(): PipelineError[] {
    if (this.#unsent.size === 0) return [];
    const out = [...this.#unsent.values()];
    this.#unsent = new Map();
    return out;
  }

  /** Errors of another isolate: a pipeline's newer one replaces the one kept. */
  addErrors(errors: readonly PipelineError[]): void {
    for (const e of errors) {
      const kept = this.#lastErrors.get(e.pipeline);
      if (!kept || kept.at <= e.at) {
        if (!kept && this.#lastErrors.size >= MAX_PIPELINES) continue;
        this.#lastErrors.set(e.pipeline, e);
      }
    }
  }

  #notify(watched: boolean): void {
    for (const w of this.#watchers) {
      try {
        w(watched);
      } catch {
        // As for listeners.
      }
    }
  }
}

/** This isolate's feed. */
export const requestFeed: RequestFeed = new RequestFeed();
