/**
 * Measurements of the DIMSE send benchmark (send.ts): when instances arrive in a DCMTK `storescp`
 * directory (inotify through Deno.watchFs, one timestamp per file), and C-ECHO round trips on a
 * held association.
 */
import { lib, ScuAssociation } from "../../gateway/adapters/dimse/mod.ts";
import { SOP, UNCOMPRESSED } from "../../gateway/dicom/mod.ts";

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
