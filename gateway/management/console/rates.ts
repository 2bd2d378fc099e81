/**
 * Requests per second, error rate and mean latency of each pipeline over the last minute, from
 * the cumulative counters of the metrics (`Metrics.summary()`), sampled when a page asks: no timer
 * runs while nobody looks at the dashboard.
 */
import type { MetricsSummary } from "../../observability/mod.ts";

/** One pipeline's figures over the window (or since the start, when there is no window yet). */
export interface PipelineRate {
  /** Requests per second. */
  rps: number;
  /** 5xx answers per second. */
  errorsPerSec: number;
  /** Mean time in the pipeline, ms (null: no request in the window). */
  meanLatencyMs: number | null;
  /** Seconds the figures cover. */
  windowSecs: number;
  /** True when they cover the whole uptime (the first sample). */
  sinceStart: boolean;
}

interface Sample {
  at: number;
  pipelines: MetricsSummary["pipelines"];
}

/** Keeps the samples of the last `windowMs` (at most one per `minGapMs`). */
export class RateSampler {
  #samples: Sample[] = [];
  readonly #windowMs: number;
  readonly #minGapMs: number;

  constructor(windowMs = 60_000, minGapMs = 1_000) {
    this.#windowMs = windowMs;
    this.#minGapMs = minGapMs;
  }

  /**
   * Adds the counters read at `now` and returns each pipeline's rates: against the oldest sample
   * of the window, or, without one, against zero at `startedAt`.
   */
  rates(summary: MetricsSummary, now: number, startedAt: number): Map<string, PipelineRate> {
    this.#samples = this.#samples.filter((s) => now - s.at <= this.#windowMs);
    const oldest = this.#samples.find((s) => now - s.at >= this.#minGapMs);
    const last = this.#samples.at(-1);
    if (!last || now - last.at >= this.#minGapMs) {
      this.#samples.push({ at: now, pipelines: structuredClone(summary.pipelines) });
      // Bounded: one sample per gap over the window.
      const max = Math.ceil(this.#windowMs / this.#minGapMs) + 1;
      if (this.#samples.length > max) this.#samples.splice(0, this.#samples.length - max);
    }
    const out = new Map<string, PipelineRate>();
    for (const [name, p] of Object.entries(summary.pipelines)) {
      const base = oldest?.pipelines[name] ?? { requests: 0, errors: 0, duration_ms_sum: 0 };
      const from = oldest ? oldest.at : startedAt;
      const secs = Math.max(0.001, (now - from) / 1000);
      const requests = Math.max(0, p.requests - base.requests);
      const errors = Math.max(0, p.errors - base.errors);
      const duration = Math.max(0, p.duration_ms_sum - base.duration_ms_sum);
      out.set(name, {
        rps: requests / secs,
        errorsPerSec: errors / secs,
        meanLatencyMs: requests > 0 ? duration / requests : null,
        windowSecs: secs,
        sinceStart: !oldest,
      });
    }
    return out;
  }
}

/** A rate for a table cell: 0, 0.05, 1.2, 35, 1.2k. */
export function shortRate(v: number): string {
  if (v >= 1000) return `${(v / 1000).toFixed(1)}k`;
  if (v >= 10 || v === 0) return v.toFixed(0);
  if (v >= 1) return v.toFixed(1);
  return v.toFixed(2);
}
