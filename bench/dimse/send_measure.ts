/**
 * Measurements of the DIMSE send benchmark (send.ts): when instances arrive in a DCMTK `storescp`
 * directory (inotify through Deno.watchFs, one timestamp per file), C-ECHO round trips on a held
 * association, and the CPU the delivery queue alone spends per message.
 */
import process from "node:process";
import { lib, ScuAssociation } from "../../gateway/adapters/dimse/mod.ts";
import { SOP, UNCOMPRESSED } from "../../gateway/dicom/mod.ts";
import { DeliveryQueue } from "../../gateway/delivery/mod.ts";
import { Body, RequestEnvelope, ResponseEnvelope } from "../../gateway/envelope.ts";
import { Logger } from "../../shared/mod.ts";
import type { QueueConfig } from "../../shared/gateway_config/mod.ts";

/** Arrival times (performance.now(), ms) of the files created in a directory. */
export class Arrivals {
  readonly times: number[] = [];
  readonly #seen = new Set<string>();
  readonly #watcher: Deno.FsWatcher;
  readonly #waiters: { n: number; resolve: () => void }[] = [];
  readonly #done: Promise<void>;

  constructor(dir: string) {
    this.#watcher = Deno.watchFs(dir, { recursive: false });
    this.#done = this.#run();
  }

  async #run(): Promise<void> {
    for await (const event of this.#watcher) {
      if (event.kind !== "create") continue;
      const now = performance.now();
      for (const path of event.paths) {
        if (this.#seen.has(path)) continue;
        this.#seen.add(path);
        this.times.push(now);
      }
      for (const w of [...this.#waiters]) {
        if (this.times.length >= w.n) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    }
  }

  /** Resolves once `n` files have arrived; rejects after `timeoutMs`. */
  until(n: number, timeoutMs: number): Promise<void> {
    if (this.times.length >= n) return Promise.resolve();
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const timer = setTimeout(() => {
      reject(new Error(`${this.times.length} of ${n} instances arrived in ${timeoutMs} ms`));
    }, timeoutMs);
    this.#waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
    return promise;
  }

  /**
   * Seconds between the arrival of file `from` and of file `to` (1-based), i.e. the time the
   * `to - from` instances after `from` took.
   */
  span(from: number, to: number): number {
    return (this.times[to - 1] - this.times[from - 1]) / 1000;
  }

  async stop(): Promise<void> {
    this.#watcher.close();
    await this.#done;
  }
}

/** Round trips (ms, sorted) of `n` C-ECHOs on one association to `calledAet` at `port`. */
export async function echoRoundTrips(
  port: number,
  calledAet: string,
  n: number,
): Promise<number[]> {
  const assoc = await ScuAssociation.open({
    host: "127.0.0.1",
    port,
    callingAet: "BENCH",
    calledAet,
    contexts: [{ abstractSyntax: SOP.verification, transferSyntaxes: UNCOMPRESSED }],
  });
  const samples: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      const res = await assoc.request(new lib.requests.CEchoRequest());
      samples.push(performance.now() - started);
      if (res.getStatus() !== 0) throw new Error(`C-ECHO to ${calledAet}: ${res.getStatus()}`);
    }
  } finally {
    await assoc.release();
  }
  return samples.sort((a, b) => a - b);
}

/** CPU time (user + system) of this process so far, ms. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** The CPU the delivery queue alone spends per message, ms (queueShare). */
export interface QueueShare {
  /** Written, flushed (fsync) and renamed into `ready/`, as a C-STORE waits for. */
  accept: number;
  /** Read back, checked and removed, delivered to a backend that answers at once. */
  deliver: number;
}

/**
 * The delivery queue's own share of a send, in this process: the files of `paths` accepted into a
 * file queue (`dir`, fsync as configured by default), then delivered by a fresh queue (`fifo`,
 * as the gateway's) to a backend that answers 200 at once and sends nothing. What the gateway
 * spends beyond it and beyond the bare sender is its backend and pipeline.
 */
export async function queueShare(dir: string, paths: string[]): Promise<QueueShare> {
  const config: QueueConfig = {
    ordering: "fifo",
    concurrency: 1,
    max_messages: paths.length + 1,
    max_bytes: 64 * 2 ** 30,
    max_attempts: 0,
    max_age_secs: 86_400,
    initial_backoff_ms: 3_600_000,
    max_backoff_ms: 3_600_000,
    fsync: true,
    fhir_conditional_create: false,
  };
  const deps = {
    logger: new Logger({ level: "error", format: "json", sink: () => {} }),
    health: { degraded: () => {}, recovered: () => {} },
    attemptTimeoutMs: 60_000,
  };
  // The destination is down while the queue fills: nothing is delivered yet.
  const filling = await DeliveryQueue.open("share", dir, config, {
    ...deps,
    deliver: () => Promise.resolve(ResponseEnvelope.json(503, {})),
  });
  let acceptMs = 0;
  try {
    for (const path of paths) {
      const body = new Body(await Deno.readFile(path), "application/dicom");
      const started = cpuMs();
      await filling.accept(
        new RequestEnvelope({
          id: "share",
          protocol: "dimse",
          method: "C-STORE",
          path: "/",
          endpoint: "scp",
          remoteAddr: "127.0.0.1",
          headers: new Headers({ "content-type": "application/dicom" }),
          body,
        }),
      );
      acceptMs += cpuMs() - started;
    }
  } finally {
    await filling.close();
  }
  const all = Promise.withResolvers<void>();
  let delivered = 0;
  let started = 0;
  const queue = await DeliveryQueue.open("share", dir, config, {
    ...deps,
    releasesBody: () => true,
    deliver: () => {
      // Timed from the first delivery (the scan at start is not a message's cost).
      if (delivered++ === 0) started = cpuMs();
      if (delivered === paths.length) all.resolve();
      return Promise.resolve(new ResponseEnvelope(200, new Headers(), Body.empty()));
    },
  });
  await all.promise;
  // Closing waits for the removal of the files delivered: part of their cost.
  await queue.close();
  const deliverMs = cpuMs() - started;
  return { accept: acceptMs / paths.length, deliver: deliverMs / (paths.length - 1) };
}
