/**
 * The alert engine: every `evaluate_interval_secs` on the Clock it reads the gateway's state,
 * evaluates each rule's condition and moves its alert through firing → resolved; it sends a
 * firing notice to each of the rule's channels (at most one per rule and channel per
 * `min_interval_minutes`: one held back goes out when the interval ends if the alert still
 * fires), reminders every `repeat_minutes`, and a resolved notice to the channels that had the
 * firing one. It keeps the active alerts and the latest resolved ones for the management API and
 * the status report; notices are queued per channel (dispatch.ts), so nothing here waits on a
 * channel.
 */
import type {
  AlertRuleConfig,
  AlertsConfig,
  GatewayConfig,
} from "../../shared/gateway_config/mod.ts";
import {
  type Clock,
  type GatewayAlertSummary,
  type Logger,
  STATUS_ALERT_LIMITS,
  type TimerHandle,
} from "../../shared/mod.ts";
import type { AlertMetrics } from "../observability/mod.ts";
import { type CertificateExpiry, configCertificatePaths, readExpiry } from "./certificates.ts";
import {
  certificateExpiry,
  componentDegraded,
  type Condition,
  deadLetters,
  errorRate,
  queueAge,
  RuleMemory,
  stuckWorker,
} from "./conditions.ts";
import { type ChannelStatus, Dispatcher } from "./dispatch.ts";
import { makeSender } from "./senders.ts";
import type { Alert, AlertSource, Notice, Sender } from "./types.ts";

/** What the engine needs. */
export interface AlertEngineDeps {
  source: AlertSource;
  clock: Clock;
  logger: Logger;
  metrics?: AlertMetrics;
  /** The channel senders (default: webhook and SMTP e-mail); tests may wrap them. */
  makeSender?: (channel: Parameters<typeof makeSender>[0]) => Promise<Sender>;
}

/** The alerts as `GET /{prefix}/alerts` shows them. */
export interface AlertsView {
  /** `[alerts]` present and enabled. */
  enabled: boolean;
  /** When the rules were last evaluated (ISO 8601), or null. */
  evaluated_at: string | null;
  /** Alerts firing now, most severe first. */
  active: Alert[];
  /** Resolved alerts, newest first. */
  recent: Alert[];
  /** Each channel's queue and figures. */
  channels: ChannelStatus[];
}

/** One rule's state across evaluations. */
interface RuleState {
  rule: AlertRuleConfig;
  memory: RuleMemory;
  active?: Alert;
  /** The last firing notice per channel (rate limit: across episodes). */
  lastSent: Map<string, number>;
  /** The last firing notice per channel in the current episode (reminders). */
  episodeSent: Map<string, number>;
  /** Channels not yet told of news while firing (a new dead letter with `notify_new`). */
  news: Set<string>;
}

const SEVERITY_RANK = { critical: 0, warning: 1, info: 2 } as const;

/** Evaluates `[alerts]` rules and sends their notices. */
export class AlertEngine {
  readonly #deps: AlertEngineDeps;
  readonly #dispatcher: Dispatcher;
  #config: AlertsConfig | undefined;
  #gatewayName = "gateway";
  #rules = new Map<string, RuleState>();
  #history: Alert[] = [];
  #timer: TimerHandle | undefined;
  #evaluating: Promise<void> | undefined;
  #evaluatedAt: number | undefined;
  #stopped = false;

  constructor(deps: AlertEngineDeps) {
    this.#deps = deps;
    this.#dispatcher = new Dispatcher(
      { clock: deps.clock, logger: deps.logger, metrics: deps.metrics },
      deps.makeSender ?? makeSender,
    );
  }

  /**
   * Takes the `[alerts]` of `config` (at start and after each reload): rules keep their state
   * when they keep their name and kind; a removed rule's alert ends without a notice; the
   * evaluation timer follows `evaluate_interval_secs`.
   */
  async configure(config: GatewayConfig): Promise<void> {
    const alerts = config.alerts?.enabled ? config.alerts : undefined;
    this.#config = alerts;
    this.#gatewayName = alerts?.gateway_name ?? config.cloud.gateway_code ?? hostName();
    const next = new Map<string, RuleState>();
    for (const rule of Object.values(alerts?.rules ?? {})) {
      const old = this.#rules.get(rule.name);
      if (old && old.rule.kind === rule.kind) {
        old.rule = rule;
        next.set(rule.name, old);
      } else {
        if (old?.active) this.#end(old, "the rule changed kind");
        next.set(rule.name, {
          rule,
          memory: new RuleMemory(),
          lastSent: new Map(),
          episodeSent: new Map(),
          news: new Set(),
        });
      }
    }
    for (const [name, old] of this.#rules) {
      if (!next.has(name) && old.active) this.#end(old, "the rule was removed");
    }
    this.#rules = next;
    await this.#dispatcher.configure(
      Object.values(alerts?.channels ?? {}),
      alerts?.queue_size ?? 100,
    );
    this.#schedule();
  }

  /** Evaluates every rule once now (one evaluation at a time; a second call waits for it). */
  evaluate(): Promise<void> {
    if (this.#evaluating) return this.#evaluating;
    this.#evaluating = this.#evaluateAll().finally(() => this.#evaluating = undefined);
    return this.#evaluating;
  }

  /** Resolves once the channels have sent (or given up) every notice queued so far. */
  idle(): Promise<void> {
    return this.#dispatcher.idle();
  }

  /** Active and recent alerts and the channels' figures. */
  view(): AlertsView {
    const active = [...this.#rules.values()].flatMap((s) => s.active ? [{ ...s.active }] : [])
      .sort((a, b) =>
        SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.since.localeCompare(b.since)
      );
    return {
      enabled: this.#config !== undefined,
      evaluated_at: this.#evaluatedAt === undefined
        ? null
        : new Date(this.#evaluatedAt).toISOString(),
      active,
      recent: this.#history.map((a) => ({ ...a })),
      channels: this.#dispatcher.status(),
    };
  }

  /** The alerts of the status report to the cloud: metadata only, bounded. */
  statusAlerts(): GatewayAlertSummary[] {
    const { active, recent } = this.view();
    return [...active, ...recent].slice(0, STATUS_ALERT_LIMITS.count).map((a) => ({
      rule: a.rule.slice(0, STATUS_ALERT_LIMITS.name),
      kind: a.kind.slice(0, STATUS_ALERT_LIMITS.name),
      severity: a.severity,
      since: a.since,
      resolved_at: a.resolved_at,
      summary: a.summary.slice(0, STATUS_ALERT_LIMITS.summary),
    }));
  }

  /** Stops evaluating and sending (what waits in the channels' queues is dropped). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#deps.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#evaluating?.catch(() => {});
    this.#dispatcher.close();
  }

  #schedule(): void {
    if (this.#timer !== undefined) this.#deps.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#stopped || !this.#config || this.#rules.size === 0) return;
    const ms = this.#config.evaluate_interval_secs * 1000;
    this.#timer = this.#deps.clock.setTimeout(async () => {
      this.#timer = undefined;
      await this.evaluate();
      if (this.#timer === undefined) this.#schedule();
    }, ms);
  }

  async #evaluateAll(): Promise<void> {
    if (!this.#config) return;
    const { source, clock, logger } = this.#deps;
    const now = clock.now();
    let certificates: Promise<CertificateExpiry[]> | undefined;
    let collected: Promise<void> | undefined;
    const collect = () => collected ??= source.collectMetrics?.() ?? Promise.resolve();
    for (const state of [...this.#rules.values()]) {
      let condition: Condition;
      try {
        condition = await this.#condition(
          state,
          now,
          collect,
          (paths) => certificates ??= this.#readCertificates(paths),
        );
      } catch (err) {
        logger.error("alert rule could not be evaluated", {
          rule: state.rule.name,
          error: (err as Error).message,
        });
        continue;
      }
      this.#apply(state, condition, now);
    }
    this.#evaluatedAt = now;
  }

  async #readCertificates(extra: string[]): Promise<CertificateExpiry[]> {
    const paths = new Set([...configCertificatePaths(this.#deps.source.config()), ...extra]);
    return await Promise.all([...paths].sort().map(readExpiry));
  }

  async #condition(
    state: RuleState,
    now: number,
    collect: () => Promise<void>,
    certificates: (extra: string[]) => Promise<CertificateExpiry[]>,
  ): Promise<Condition> {
    const { source } = this.#deps;
    const rule = state.rule;
    switch (rule.kind) {
      case "dead_letters":
        return deadLetters(rule, source.queueStats(), state.memory);
      case "queue_age":
        return queueAge(rule, source.queueStats());
      case "error_rate":
        await collect();
        return errorRate(rule, source.metricsSummary(), state.memory, now);
      case "certificate_expiry": {
        // Every rule reads the configuration's files; a rule's own `paths` add to them.
        const all = await certificates([]);
        const own = (rule.paths ?? []).filter((p) => !all.some((c) => c.path === p));
        const extra = await Promise.all(own.map(readExpiry));
        return certificateExpiry(rule, [...all, ...extra], now);
      }
      case "stuck_worker":
        return stuckWorker(rule, source.workers(), state.memory, now);
      case "component_degraded":
        return componentDegraded(rule, source.degraded());
    }
  }

  #apply(state: RuleState, condition: Condition, now: number): void {
    const rule = state.rule;
    const { logger, metrics } = this.#deps;
    if (condition.firing) {
      if (!state.active) {
        state.active = {
          id: crypto.randomUUID(),
          rule: rule.name,
          kind: rule.kind,
          severity: rule.severity,
          status: "firing",
          since: new Date(now).toISOString(),
          resolved_at: null,
          summary: condition.summary,
          subjects: condition.subjects,
          notified: [],
        };
        state.episodeSent.clear();
        metrics?.firing(rule.name, true);
        logger.warn("alert firing", {
          rule: rule.name,
          kind: rule.kind,
          severity: rule.severity,
          summary: condition.summary,
        });
      } else {
        state.active.summary = condition.summary;
        state.active.subjects = condition.subjects;
        state.active.severity = rule.severity;
        if (condition.news) { for (const c of rule.channels) state.news.add(c); }
      }
      for (const channel of rule.channels) this.#maybeNotify(state, channel, now);
      return;
    }
    if (!state.active) return;
    state.news.clear();
    const alert = state.active;
    alert.status = "resolved";
    alert.resolved_at = new Date(now).toISOString();
    alert.summary = `cleared: ${alert.summary}`.slice(0, 1000);
    state.active = undefined;
    metrics?.firing(rule.name, false);
    logger.info("alert resolved", {
      rule: rule.name,
      kind: rule.kind,
      firing_secs: Math.round((now - Date.parse(alert.since)) / 1000),
    });
    if (rule.send_resolved) {
      for (const channel of alert.notified) {
        this.#send(channel, { status: "resolved", reminder: false, alert }, now);
      }
    }
    this.#remember(alert);
  }

  #maybeNotify(state: RuleState, channel: string, now: number): void {
    const rule = state.rule;
    const alert = state.active!;
    const minMs = rule.min_interval_minutes * 60_000;
    const last = state.lastSent.get(channel);
    const inEpisode = state.episodeSent.get(channel);
    const allowed = last === undefined || now - last >= minMs;
    if (inEpisode === undefined) {
      if (!allowed) return; // held back: sent once the interval ends, if it still fires
      this.#send(channel, { status: "firing", reminder: false, alert }, now);
      alert.notified.push(channel);
    } else {
      const repeatMs = rule.repeat_minutes * 60_000;
      const due = state.news.has(channel) || (repeatMs > 0 && now - inEpisode >= repeatMs);
      if (!due || !allowed) return;
      this.#send(channel, { status: "firing", reminder: true, alert }, now);
    }
    state.lastSent.set(channel, now);
    state.episodeSent.set(channel, now);
    state.news.delete(channel);
  }

  #send(channel: string, notice: Omit<Notice, "gateway" | "at">, now: number): void {
    const full: Notice = {
      ...notice,
      alert: { ...notice.alert, subjects: [...notice.alert.subjects] },
      gateway: this.#gatewayName,
      at: new Date(now).toISOString(),
    };
    if (!this.#dispatcher.enqueue(channel, full)) {
      this.#deps.logger.warn("alert notice not queued: its channel is unusable", {
        channel,
        rule: notice.alert.rule,
      });
    }
  }

  /** Ends an alert whose rule went away: no notice (the rule that would word it is gone). */
  #end(state: RuleState, why: string): void {
    const alert = state.active!;
    alert.status = "resolved";
    alert.resolved_at = new Date(this.#deps.clock.now()).toISOString();
    alert.summary = `ended (${why}): ${alert.summary}`.slice(0, 1000);
    state.active = undefined;
    this.#deps.metrics?.firing(state.rule.name, false);
    this.#remember(alert);
  }

  #remember(alert: Alert): void {
    this.#history.unshift(alert);
    const keep = this.#config?.history ?? 100;
    if (this.#history.length > keep) this.#history.length = keep;
  }
}

/** The host's name, or `gateway` when it cannot be read. */
function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "gateway";
  }
}
