/** How many data-plane isolates a gateway runs. */
import type { RuntimeConfig } from "../../shared/gateway_config/mod.ts";

/** The most isolates `GATEWAY_WORKERS` or the core count may ask for (the config's own bound). */
const MAX_WORKERS = 64;

/**
 * `[runtime] workers` when written; else `GATEWAY_WORKERS` (an integer 1-64; anything else is
 * ignored); else the number of CPU cores.
 */
export function defaultWorkerCount(
  runtime: RuntimeConfig | undefined,
  env: (name: string) => string | undefined,
): number {
  if (runtime?.workers !== undefined) return runtime.workers;
  const fromEnv = env("GATEWAY_WORKERS");
  if (fromEnv !== undefined && /^\d{1,2}$/.test(fromEnv.trim())) {
    const n = Number(fromEnv.trim());
    if (n >= 1 && n <= MAX_WORKERS) return n;
  }
  return Math.max(1, Math.min(MAX_WORKERS, navigator.hardwareConcurrency || 1));
}
