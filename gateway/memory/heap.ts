/**
 * The V8 heap of this isolate: how much is used and where its limit is (`--max-old-space-size`
 * and the young generation; each isolate, main thread or worker, has a limit of its own).
 *
 * @module
 */
import { getHeapStatistics } from "node:v8";

/** This isolate's heap now, in bytes. */
export interface HeapFigures {
  /** Bytes of live and not yet collected objects. */
  used: number;
  /** The size past which V8 ends the process ("Fatal JavaScript out of memory"). */
  limit: number;
}

/** This isolate's heap use and limit (about 1 µs). */
export function heapFigures(): HeapFigures {
  const stats = getHeapStatistics();
  return { used: stats.used_heap_size, limit: stats.heap_size_limit };
}

/** This isolate's heap limit in bytes. */
export function heapLimit(): number {
  return getHeapStatistics().heap_size_limit;
}
