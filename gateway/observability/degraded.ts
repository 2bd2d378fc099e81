/**
 * Components of the gateway that are degraded, not down: a delivery queue whose disk refuses
 * writes, a generated management token that could not be saved. Each change of state is logged
 * once (an error when it starts, info when it ends: never once per failed attempt), mirrored in
 * `gateway_component_degraded{component}` and listed for `/readyz` and the status report to the
 * cloud. The process keeps serving everything else.
 */
import type { Logger } from "../../shared/mod.ts";
import type { ComponentMetrics } from "./metrics.ts";

/** What a component reports its state through. */
export interface ComponentHealth {
  /** `component` cannot do its work for `reason`; `owner` is the object reporting it. */
  degraded(component: string, reason: string, owner?: object): void;
  /** `component` works again; `quiet` when it simply went away (no log line). */
  recovered(component: string, owner?: object, quiet?: boolean): void;
}

/** A degraded component, as `/readyz` and the status report show it. */
export interface DegradedComponent {
  component: string;
  reason: string;
  /** When it became degraded (ISO 8601). */
  since: string;
}

interface Entry {
  reason: string;
  since: number;
  owner?: object;
}

/** The gateway's degraded components. */
export class DegradedComponents implements ComponentHealth {
  readonly #logger: Logger;
  readonly #metrics: ComponentMetrics | undefined;
  readonly #entries = new Map<string, Entry>();

  constructor(deps: { logger: Logger; metrics?: ComponentMetrics }) {
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
  }

  degraded(component: string, reason: string, owner?: object): void {
    const entry = this.#entries.get(component);
    if (entry) {
      // Already degraded: the newest reason is shown, nothing more is logged.
      entry.reason = reason;
      entry.owner = owner;
      return;
    }
    this.#entries.set(component, { reason, since: Date.now(), owner });
    this.#metrics?.degraded(component, true);
    this.#logger.error("component degraded", { component, reason });
  }

  recovered(component: string, owner?: object, quiet = false): void {
    const entry = this.#entries.get(component);
    // A component replaced by another of the same name (a reload) leaves the new one's state.
    if (!entry || (owner !== undefined && entry.owner !== undefined && entry.owner !== owner)) {
      return;
    }
    this.#entries.delete(component);
    this.#metrics?.degraded(component, false);
    if (!quiet) {
      this.#logger.info("component recovered", {
        component,
        degraded_secs: Math.round((Date.now() - entry.since) / 1000),
      });
    }
  }

  /** The degraded components now, by name. */
  list(): DegradedComponent[] {
    return [...this.#entries].sort(([a], [b]) => a.localeCompare(b)).map(([component, e]) => ({
      component,
      reason: e.reason,
      since: new Date(e.since).toISOString(),
    }));
  }
}
