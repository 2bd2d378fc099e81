/**
 * Server-sent event streams of the live tail, and the captures of the tail's no-script form. A
 * stream subscribes to the isolate's request feed (which then asks the workers to forward their
 * requests) and unsubscribes when the browser goes; one timer for all streams sends a comment
 * every 15 s (keeping proxies and the listener's idle timeout from closing a quiet stream) and
 * ends every stream once the gateway stops being ready (a shutdown does not wait for them).
 * A browser that reads too slowly loses events, counted and told (`event: dropped`), never
 * buffered without bound.
 */
import type { RequestEvent, RequestFeed } from "../../pipeline/mod.ts";
import { matches, type TailFilter } from "./tail.tsx";

/** Most streams open at once (more are answered 429). */
export const MAX_STREAMS = 16;
/** Events a stream holds for a slow reader before it drops. */
const STREAM_BUFFER = 512;
/** Ticks (of 1 s) between keep-alive comments. */
const KEEPALIVE_TICKS = 15;

interface Open {
  controller: ReadableStreamDefaultController<Uint8Array>;
  close(): void;
}

const encoder = new TextEncoder();

/** The open tail streams of one console. */
export class TailStreams {
  readonly #feed: RequestFeed;
  readonly #ready: () => boolean;
  readonly #max: number;
  readonly #open = new Set<Open>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #ticks = 0;

  constructor(feed: RequestFeed, ready: () => boolean, max = MAX_STREAMS) {
    this.#feed = feed;
    this.#ready = ready;
    this.#max = max;
  }

  /** Streams open now. */
  get count(): number {
    return this.#open.size;
  }

  /** A new event stream of the requests passing `filter`, or null when too many are open. */
  open(filter: TailFilter, signal: AbortSignal): ReadableStream<Uint8Array> | null {
    if (this.#open.size >= this.#max) return null;
    let unsubscribe: (() => void) | undefined;
    let entry: Open | undefined;
    let dropped = 0;
    const end = () => {
      unsubscribe?.();
      unsubscribe = undefined;
      if (entry) this.#open.delete(entry);
      if (this.#open.size === 0) this.#stopTimer();
    };
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        entry = {
          controller,
          close: () => {
            end();
            try {
              controller.close();
            } catch {
              // Already closed or errored.
            }
          },
        };
        this.#open.add(entry);
        this.#startTimer();
        // The browser reconnects after 3 s when the stream breaks.
        controller.enqueue(encoder.encode("retry: 3000\n: connected\n\n"));
        unsubscribe = this.#feed.subscribe((event) => {
          if (!matches(event, filter)) return;
          if ((controller.desiredSize ?? 0) <= 0) {
            dropped++;
            return;
          }
          if (dropped > 0) {
            controller.enqueue(encoder.encode(`event: dropped\ndata: ${dropped}\n\n`));
            dropped = 0;
          }
          controller.enqueue(
            encoder.encode(`event: request\ndata: ${JSON.stringify(event)}\n\n`),
          );
        });
      },
      cancel: () => end(),
    }, new CountQueuingStrategy({ highWaterMark: STREAM_BUFFER }));
    signal.addEventListener("abort", () => entry?.close(), { once: true });
    return stream;
  }

  /**
   * The requests passing `filter` in the next `seconds`, or fewer: it ends at `limit` events, or
   * when `signal` aborts (the browser went away).
   */
  capture(
    filter: TailFilter,
    seconds: number,
    limit: number,
    signal: AbortSignal,
  ): Promise<RequestEvent[]> {
    const caught: RequestEvent[] = [];
    const { promise, resolve } = Promise.withResolvers<RequestEvent[]>();
    const finish = () => {
      unsubscribe();
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve(caught);
    };
    const unsubscribe = this.#feed.subscribe((event) => {
      if (!matches(event, filter) || caught.length >= limit) return;
      caught.push(event);
      if (caught.length >= limit) queueMicrotask(finish);
    });
    const timer = setTimeout(finish, seconds * 1000);
    signal.addEventListener("abort", finish, { once: true });
    return promise;
  }

  /** Ends every stream (the console stops). */
  closeAll(): void {
    for (const open of [...this.#open]) open.close();
  }

  #startTimer(): void {
    if (this.#timer !== undefined) return;
    this.#ticks = 0;
    this.#timer = setInterval(() => this.#tick(), 1000);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  #stopTimer(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    if (!this.#ready()) {
      this.closeAll();
      return;
    }
    if (++this.#ticks % KEEPALIVE_TICKS !== 0) return;
    for (const open of this.#open) {
      try {
        if ((open.controller.desiredSize ?? 0) > 0) {
          open.controller.enqueue(encoder.encode(": keep-alive\n\n"));
        }
      } catch {
        open.close();
      }
    }
  }
}
