/**
 * A bounded time series of each gateway's status reports, for the fleet charts: at most one sample
 * per minute (a later report in the same minute replaces it), dropped by KV after
 * {@link SERIES_RETENTION_MS}. Samples hold the gateway's cumulative counters; rates come from the
 * differences between samples (see resources/fleet.ts).
 */
import { K } from "./keys.ts";

/** How long samples are kept. */
export const SERIES_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Pipelines kept per sample: a KV value holds 64 KiB; the charts need the totals. */
export const SAMPLE_PIPELINES = 100;

/** One sample: the cumulative counters of a status report. */
export interface StatusSample {
  /** Report time, ms since the epoch. */
  at: number;
  uptime_secs: number;
  health: "healthy" | "degraded" | "unhealthy";
  pipelines: { name: string; requests: number; errors: number; duration_ms_sum?: number }[];
}

/** Status samples over KV. */
export class StatusSeriesStore {
  #kv: Deno.Kv;

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /**
   * Records a sample (replacing another of the same minute); a gateway with more than
   * {@link SAMPLE_PIPELINES} pipelines has the rest summed into one `(other)` entry, so a sample
   * stays well under KV's value limit whatever the report holds.
   */
  async add(teamId: string, gatewayId: string, sample: StatusSample): Promise<void> {
    let pipelines = sample.pipelines;
    if (pipelines.length > SAMPLE_PIPELINES) {
      const rest = pipelines.slice(SAMPLE_PIPELINES - 1);
      const sum = (f: (p: StatusSample["pipelines"][number]) => number | undefined) =>
        rest.some((p) => f(p) === undefined) ? undefined : rest.reduce((n, p) => n + f(p)!, 0);
      pipelines = [...pipelines.slice(0, SAMPLE_PIPELINES - 1), {
        name: "(other)",
        requests: sum((p) => p.requests)!,
        errors: sum((p) => p.errors)!,
        duration_ms_sum: sum((p) => p.duration_ms_sum),
      }];
    }
    await this.#kv.set(
      K.statusSample(teamId, gatewayId, Math.floor(sample.at / 60_000)),
      { ...sample, pipelines },
      { expireIn: SERIES_RETENTION_MS },
    );
  }

  /** Samples since `since` (ms), oldest first. */
  async since(teamId: string, gatewayId: string, since: number): Promise<StatusSample[]> {
    const out: StatusSample[] = [];
    const prefix = K.statusSamples(teamId, gatewayId);
    for await (
      const e of this.#kv.list<StatusSample>({
        start: [...prefix, Math.floor(since / 60_000)],
        end: [...prefix, Number.MAX_SAFE_INTEGER],
      })
    ) {
      if (e.value.at >= since) out.push(e.value);
    }
    return out;
  }

  /** Keys deleted with the gateway. */
  async keys(teamId: string, gatewayId: string): Promise<Deno.KvKey[]> {
    const keys: Deno.KvKey[] = [];
    for await (const e of this.#kv.list({ prefix: K.statusSamples(teamId, gatewayId) })) {
      keys.push(e.key);
    }
    return keys;
  }
}
