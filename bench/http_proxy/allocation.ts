/**
 * Bytes the V8 heap of a server process allocates per request. The process runs with
 * `--trace-gc-nvp`: every garbage collection prints a JSON line whose `allocated` is the bytes
 * allocated since the previous one. Their sum over a window of exactly `requests` requests
 * (sent by this process, so the server's count is known), divided by the count, is the figure.
 * The heap allocated after the window's last collection is not counted: at most one young
 * generation (2 MiB with the gateway's flags), under 1 % of a window of 100,000 requests at 4 KB.
 */

/** What one measurement found. */
export interface AllocationResult {
  requests: number;
  /** Bytes allocated during the window (sum of `allocated` of its collections). */
  bytes: number;
  /** Garbage collections in the window. */
  collections: number;
  /** `bytes / requests`. */
  perRequest: number;
}

/** Sums the `allocated` of `--trace-gc-nvp` lines while a window is open, and keeps the pauses. */
export class GcTraceMeter {
  /** The window's collections: V8's kind (`s` scavenge, `mc` mark-compact, ...) and pause, ms. */
  readonly pauses: { kind: string; ms: number }[] = [];
  #buffer = "";
  #open = false;
  #bytes = 0;
  #collections = 0;
  #decoder = new TextDecoder();
  readonly #onLine: ((line: string) => void) | undefined;

  /** `onLine` sees every line of the output, in the window or not. */
  constructor(onLine?: (line: string) => void) {
    this.#onLine = onLine;
  }

  /** Feeds a chunk of the process's stdout. */
  feed = (chunk: Uint8Array): void => {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = this.#buffer.indexOf("\n")) !== -1) {
      const line = this.#buffer.slice(0, newline);
      this.#buffer = this.#buffer.slice(newline + 1);
      this.#onLine?.(line);
      if (this.#open) this.#line(line);
    }
  };

  #line(line: string): void {
    const at = line.indexOf("GC: {");
    if (at === -1) return;
    try {
      const event = JSON.parse(line.slice(at + 4)) as {
        allocated?: number;
        pause?: number;
        gc?: string;
      };
      if (typeof event.allocated === "number") {
        this.#bytes += event.allocated;
        this.#collections++;
      }
      if (typeof event.pause === "number") {
        this.pauses.push({ kind: event.gc ?? "", ms: event.pause });
      }
    } catch {
      // A line of another format: not a collection.
    }
  }

  /** Starts counting from zero. */
  open(): void {
    this.#bytes = 0;
    this.#collections = 0;
    this.pauses.length = 0;
    this.#open = true;
  }

  /** Stops counting; what was counted. */
  close(): { bytes: number; collections: number } {
    this.#open = false;
    return { bytes: this.#bytes, collections: this.#collections };
  }
}

/** Sends `count` GET requests to `url`, `concurrency` at a time; fails on any non-2xx answer. */
export async function sendRequests(url: string, count: number, concurrency = 16): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const res = await fetch(url);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * The allocation per request of the process whose stdout feeds `meter`: `warmup` requests (JIT,
 * pools), a pause for the traces to arrive, then the window of `requests`.
 */
export async function measureAllocation(
  meter: GcTraceMeter,
  url: string,
  requests: number,
  warmup = 5_000,
): Promise<AllocationResult> {
  await sendRequests(url, warmup);
  await new Promise((resolve) => setTimeout(resolve, 300));
  meter.open();
  await sendRequests(url, requests);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const { bytes, collections } = meter.close();
  return { requests, bytes, collections, perRequest: bytes / requests };
}
