/**
 * Components of the gateway that are degraded, not down: a delivery queue whose disk refuses
 * writes, a generated management token that could not be saved. Each change of state is logged
 * once (an error when it starts, info when it ends: never once per failed attempt), mirrored in
 * `gateway_component_degraded{component}` and listed for `/readyz` and the status report to the
 * cloud. The process keeps serving everything else.
 *
 * A component can be degraded in several isolates at once (each data-plane worker has its own
 * tracking writer): the main thread's own reports and each worker's (forwarded by the worker
 * pool, `source` "worker N") are kept apart, so the component counts once while any of them
 * reports it, and one isolate's recovery does not hide another's failure.
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
  /** Why; a worker's report is prefixed with its isolate (`worker 2: ...`). */
  reason: string;
  /** When it became degraded (ISO 8601). */
  since: string;
}

/** The source of the main thread's own reports. */
const LOCAL = "";

/** One isolate's report of a component. */
interface Report {
  reason: string;
  since: number;
  owner?: object;
}

interface Entry {
  /** Since when some isolate has reported it without a break. */
  since: number;
  /** By source: LOCAL, or "worker N". */
  reports: Map<string, Report>;
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
    this.degradedIn(LOCAL, component, reason, owner);
  }

  recovered(component: string, owner?: object, quiet = false): void {
    const report = this.#entries.get(component)?.reports.get(LOCAL);
    // A component replaced by another of the same name (a reload) leaves the new one's state.
    if (!report || (owner !== undefined && report.owner !== undefined && report.owner !== owner)) {
      return;
    }
    this.recoveredIn(LOCAL, component, quiet);
  }

  /** `component` of the isolate `source` ("worker 2") is degraded for `reason`. */
  degradedIn(source: string, component: string, reason: string, owner?: object): void {
    let entry = this.#entries.get(component);
    const report = entry?.reports.get(source);
    if (report) {
      // Already degraded there: the newest reason is shown, nothing more is logged.
      report.reason = reason;
      report.owner = owner;
      return;
    }
    const now = Date.now();
    if (!entry) {
      entry = { since: now, reports: new Map() };
      this.#entries.set(component, entry);
      this.#metrics?.degraded(component, true);
    }
    entry.reports.set(source, { reason, since: now, owner });
    this.#logger.error("component degraded", {
      component,
      reason,
      ...(source === LOCAL ? {} : { source }),
    });
  }

  /** `component` of the isolate `source` works again (other isolates' reports stay). */
  recoveredIn(source: string, component: string, quiet = false): void {
    const entry = this.#entries.get(component);
    const report = entry?.reports.get(source);
    if (!entry || !report) return;
    entry.reports.delete(source);
    const last = entry.reports.size === 0;
    if (last) {
      this.#entries.delete(component);
      this.#metrics?.degraded(component, false);
    }
    if (quiet) return;
    this.#logger.info(last ? "component recovered" : "component recovered in one isolate", {
      component,
      degraded_secs: Math.round((Date.now() - (last ? entry.since : report.since)) / 1000),
      ...(source === LOCAL ? {} : { source }),
      ...(last ? {} : { still_degraded_in: entry.reports.size }),
    });
  }

  /** Drops every report of `source` (its isolate ended or was replaced). */
  forgetSource(source: string, quiet = false): void {
    for (const [component, entry] of [...this.#entries]) {
      if (entry.reports.has(source)) this.recoveredIn(source, component, quiet);
    }
  }

  /** The degraded components now, by name. */
  list(): DegradedComponent[] {
    return [...this.#entries].sort(([a], [b]) => a.localeCompare(b)).map(([component, e]) => ({
      component,
      reason: [...e.reports].sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))
        .map(([source, r]) => source === LOCAL ? r.reason : `${source}: ${r.reason}`)
        .join("; "),
      since: new Date(e.since).toISOString(),
    }));
  }
}
