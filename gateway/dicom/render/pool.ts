/**
 * The rendering workers, from the gateway's side: up to {@link MAX_WORKERS} Deno Workers started
 * on first use, each taking jobs in turn (the least busy gets the next), and ended after
 * {@link IDLE_MS} without work so an idle gateway holds no extra threads. At most
 * {@link MAX_QUEUED} jobs wait at once; more are refused with 503 rather than queued without end.
 */
import { GatewayError } from "../../errors.ts";
import type { RenderJob } from "./job.ts";
import type { WorkerRequest, WorkerResponse } from "./worker.ts";

const MAX_WORKERS = Math.max(1, Math.min(2, navigator.hardwareConcurrency - 1));
const IDLE_MS = 10_000;
const MAX_QUEUED = 64;

interface Pending {
  resolve: (bytes: Uint8Array) => void;
  reject: (err: unknown) => void;
}

class RenderWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly onIdle: (w: RenderWorker) => void) {
    this.#worker = new Worker(new URL("./worker.ts", import.meta.url).href, { type: "module" });
    this.#worker.onmessage = (e: MessageEvent<WorkerResponse>) => this.#answer(e.data);
    this.#worker.onerror = (e) => {
      e.preventDefault();
      this.#failAll(new Error(`rendering worker failed: ${e.message}`));
    };
  }

  get busy(): number {
    return this.#pending.size;
  }

  run(id: number, job: RenderJob): Promise<Uint8Array> {
    clearTimeout(this.#idleTimer);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const message: WorkerRequest = { id, job };
      this.#worker.postMessage(message);
    });
  }

  terminate(): void {
    clearTimeout(this.#idleTimer);
    this.#worker.terminate();
    this.#failAll(new Error("rendering worker stopped"));
  }

  #answer(res: WorkerResponse): void {
    const pending = this.#pending.get(res.id);
    if (!pending) return;
    this.#pending.delete(res.id);
    if ("bytes" in res) pending.resolve(res.bytes);
    else {
      const code = res.error.status === 406 ? "not_acceptable" : "invalid_dicom_instance";
      pending.reject(new GatewayError(res.error.status, code, res.error.message));
    }
    if (this.#pending.size === 0) {
      this.#idleTimer = setTimeout(() => this.onIdle(this), IDLE_MS);
    }
  }

  #failAll(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}

const workers: RenderWorker[] = [];
let nextId = 1;

function retire(w: RenderWorker): void {
  if (w.busy > 0) return;
  const i = workers.indexOf(w);
  if (i >= 0) workers.splice(i, 1);
  w.terminate();
}

/** Render and encode `job` in a worker; 406/502 GatewayErrors for what cannot be rendered. */
export function renderInWorker(job: RenderJob): Promise<Uint8Array> {
  const queued = workers.reduce((n, w) => n + w.busy, 0);
  if (queued >= MAX_QUEUED) {
    return Promise.reject(
      new GatewayError(503, "render_busy", "too many renderings in progress; try again shortly"),
    );
  }
  let worker = workers.find((w) => w.busy === 0);
  if (!worker && workers.length < MAX_WORKERS) {
    worker = new RenderWorker(retire);
    workers.push(worker);
  }
  worker ??= workers.reduce((a, b) => (b.busy < a.busy ? b : a));
  return worker.run(nextId++, job);
}

/** End every rendering worker (at shutdown, and between tests). */
export function stopRenderWorkers(): void {
  for (const w of workers.splice(0)) w.terminate();
}
