/**
 * Target selection for a backend with one or more base URLs: round robin, least requests or
 * random; passive health (consecutive failures take a target out for a cool-down, but never the
 * last one in rotation unless `eject_last_target`) and optional active health checks.
 */
import type { BackendConfig, LoadBalancing } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import { GatewayError } from "../errors.ts";

/** One upstream target and its health state. */
export class Target {
  readonly name: string;
  readonly url: string;
  inFlight = 0;
  consecutiveFailures = 0;
  /** `performance.now()` until which the target is out (passive health). */
  downUntil = 0;
  /** False while active health checks say the target is down. */
  activeHealthy = true;
  #activeSuccesses = 0;

  constructor(name: string, url: string) {
    this.name = name;
    this.url = url;
  }

  /** True when the target may receive requests now. */
  healthy(now = performance.now()): boolean {
    return this.activeHealthy && now >= this.downUntil;
  }

  /** Record an active check result. */
  recordCheck(ok: boolean, threshold: number): boolean {
    const before = this.activeHealthy;
    if (ok) {
      this.#activeSuccesses++;
      if (!this.activeHealthy && this.#activeSuccesses >= threshold) {
        this.activeHealthy = true;
        this.consecutiveFailures = 0;
        this.downUntil = 0;
      }
    } else {
      this.#activeSuccesses = 0;
      this.activeHealthy = false;
    }
    return before !== this.activeHealthy;
  }
}

/** The targets of one backend and the strategy that picks among them. */
export class TargetPool {
  readonly targets: Target[];
  readonly #strategy: LoadBalancing;
  readonly #maxFailures: number;
  readonly #cooldownMs: number;
  readonly #ejectLast: boolean;
  readonly #backend: string;
  #next = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(backend: string, targets: { name: string; url: string }[], config: BackendConfig) {
    this.#backend = backend;
    this.targets = targets.map((t) => new Target(t.name, t.url));
    this.#strategy = config.load_balancing;
    this.#maxFailures = config.max_failures;
    this.#cooldownMs = config.cooldown_secs * 1000;
    this.#ejectLast = config.eject_last_target === true;
  }

  /**
   * Pick a healthy target not in `exclude`. When every target is down, 502 `no_healthy_target`.
   */
  pick(exclude?: Set<Target>): Target {
    const now = performance.now();
    const targets = this.targets;
    // One target (most backends): no candidate list to build.
    if (targets.length === 1 && targets[0].healthy(now) && !exclude?.has(targets[0])) {
      return targets[0];
    }
    const candidates = targets.filter((t) => t.healthy(now) && !exclude?.has(t));
    if (candidates.length === 0) {
      throw new GatewayError(
        502,
        "no_healthy_target",
        `backend ${this.#backend}: no healthy target (${
          this.targets.map((t) => t.name).join(", ")
        } all down)`,
      );
    }
    if (candidates.length === 1) return candidates[0];
    switch (this.#strategy) {
      case "random":
        return candidates[Math.floor(Math.random() * candidates.length)];
      case "least_requests": {
        let best = candidates[0];
        for (const c of candidates) if (c.inFlight < best.inFlight) best = c;
        return best;
      }
      default:
        return candidates[this.#next++ % candidates.length];
    }
  }

  /** A call to the target succeeded. */
  success(target: Target): void {
    target.consecutiveFailures = 0;
  }

  /**
   * A call to the target failed at the connection level (or timed out); may take it out for the
   * cool-down. Passive health alone never empties the backend: the last target in rotation
   * stays (unless `eject_last_target`), since refusing every request at once for the cool-down
   * helps no one when there is nowhere else to send them (Envoy keeps hosts for the same end:
   * `max_ejection_percent`, the panic threshold).
   */
  failure(target: Target, logger?: Logger): void {
    target.consecutiveFailures++;
    const now = performance.now();
    if (target.consecutiveFailures < this.#maxFailures || target.downUntil > now) return;
    if (!this.#ejectLast && !this.targets.some((t) => t !== target && t.healthy(now))) {
      if (target.consecutiveFailures === this.#maxFailures) {
        logger?.warn("target failing, kept in rotation: it is the last one", {
          backend: this.#backend,
          target: target.name,
          failures: target.consecutiveFailures,
        });
      }
      return;
    }
    target.downUntil = now + this.#cooldownMs;
    logger?.warn("target marked down", {
      backend: this.#backend,
      target: target.name,
      failures: target.consecutiveFailures,
      cooldown_ms: this.#cooldownMs,
    });
  }

  /** Start active health checks (GET `path` on each target every interval). */
  startHealthChecks(config: BackendConfig, logger: Logger): void {
    const hc = config.health_check;
    if (!hc) return;
    const run = async () => {
      await Promise.all(this.targets.map(async (t) => {
        let ok = false;
        try {
          const res = await fetch(joinUrl(t.url, hc.path), {
            signal: AbortSignal.timeout(hc.timeout_secs * 1000),
          });
          await res.body?.cancel();
          ok = res.status >= 200 && res.status < 400;
        } catch {
          ok = false;
        }
        if (t.recordCheck(ok, hc.healthy_threshold)) {
          logger.warn(ok ? "target healthy again" : "target failed health check", {
            backend: this.#backend,
            target: t.name,
          });
        }
      }));
    };
    const timer = setInterval(run, hc.interval_secs * 1000);
    Deno.unrefTimer(timer as unknown as number);
    this.#timer = timer;
    run();
  }

  /** Stop health checks. */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** Join a base URL and a path that starts with `/` (no double slash, base path kept). */
export function joinUrl(base: string, path: string): string {
  const b = base.endsWith("/") ? base.slice(0, -1) : base;
  return b + (path.startsWith("/") ? path : "/" + path);
}
