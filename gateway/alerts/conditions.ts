/**
 * The condition of each rule kind, read from the gateway's own state: whether it holds now, a
 * one-line summary (names and figures only: never message content) and its subjects. A rule that
 * needs memory across evaluations (the error-rate window, the worker replacements) keeps it in
 * its RuleMemory.
 */
import type { AlertRuleConfig } from "../../shared/gateway_config/mod.ts";
import type { MetricsSummary, QueueSnapshot } from "../observability/mod.ts";
import { type CertificateExpiry } from "./certificates.ts";
import type { AlertSource } from "./types.ts";

/** What a rule's condition is now. */
export interface Condition {
  firing: boolean;
  summary: string;
  subjects: string[];
  /** Something new happened that the rule notifies while it keeps firing (a new dead letter). */
  news?: boolean;
}

/** Counters of one pipeline at one evaluation. */
interface Sample {
  at: number;
  requests: number;
  errors: number;
}

/** Samples kept per pipeline, at most. */
const MAX_SAMPLES = 2_000;
const DAY_MS = 86_400_000;

/** What a rule remembers between evaluations. */
export class RuleMemory {
  /** error_rate: counters per pipeline, oldest first. */
  readonly samples = new Map<string, Sample[]>();
  /** dead_letters: dead letters each queue had written so far. */
  readonly deadLettered = new Map<string, number>();
  /** stuck_worker: replacements seen, and when the count last grew. */
  replacements: number | undefined;
  replacedAt: number | undefined;
}

const plural = (n: number, one: string, many = one + "s") => `${n} ${n === 1 ? one : many}`;

/** Characters a summary may take (the status report to the cloud carries at most 300). */
const SUMMARY_BUDGET = 280;

/** `items` joined while they fit the summary's budget, then how many more there are. */
function listed(items: string[]): string {
  let out = "";
  let shown = 0;
  for (const item of items) {
    const next = shown === 0 ? item : `${out}; ${item}`;
    const rest = items.length - shown - 1;
    const tail = rest > 0 ? `; and ${rest} more` : "";
    if (shown > 0 && next.length + tail.length > SUMMARY_BUDGET) break;
    out = next;
    shown++;
  }
  const rest = items.length - shown;
  return rest > 0 ? `${out}; and ${rest} more` : out;
}

function watchedQueues(rule: AlertRuleConfig, queues: QueueSnapshot[]): QueueSnapshot[] {
  const names = rule.backends;
  return names ? queues.filter((q) => names.includes(q.backend)) : queues;
}

/**
 * dead_letters: a queue holds at least `threshold` dead letters; with `notify_new`, a dead letter
 * written since the last evaluation is news.
 */
export function deadLetters(
  rule: AlertRuleConfig,
  queues: QueueSnapshot[],
  memory: RuleMemory,
): Condition {
  const threshold = rule.threshold ?? 1;
  const watched = watchedQueues(rule, queues);
  let news = false;
  for (const q of watched) {
    const before = memory.deadLettered.get(q.backend);
    if (before !== undefined && q.dead_lettered_total > before) news = true;
    memory.deadLettered.set(q.backend, q.dead_lettered_total);
  }
  const hit = watched.filter((q) => q.dead >= threshold);
  return {
    news: rule.notify_new === true && news,
    firing: hit.length > 0,
    subjects: hit.map((q) => `queue/${q.backend}`),
    summary: hit.length
      ? listed(hit.map((q) => `queue ${q.backend} holds ${plural(q.dead, "dead letter")}`))
      : `no queue holds ${threshold === 1 ? "a dead letter" : `${threshold} dead letters`}`,
  };
}

/** queue_age: the oldest message waiting in a queue is older than `max_age_minutes`. */
export function queueAge(rule: AlertRuleConfig, queues: QueueSnapshot[]): Condition {
  const limitSecs = (rule.max_age_minutes ?? 0) * 60;
  const hit = watchedQueues(rule, queues).filter((q) =>
    q.depth > 0 && q.oldest_age_secs > limitSecs
  );
  return {
    firing: hit.length > 0,
    subjects: hit.map((q) => `queue/${q.backend}`),
    summary: hit.length
      ? listed(
        hit.map((q) =>
          `queue ${q.backend}: oldest of ${plural(q.depth, "message")} waits ${
            Math.floor(q.oldest_age_secs / 60)
          } min (limit ${rule.max_age_minutes} min)`
        ),
      )
      : `no message waits longer than ${rule.max_age_minutes} min`,
  };
}

/**
 * error_rate: over the last `window_minutes` (the counters sampled at each evaluation), a
 * pipeline answered more than `max_ratio` of at least `min_requests` requests with a 5xx.
 */
export function errorRate(
  rule: AlertRuleConfig,
  summary: MetricsSummary,
  memory: RuleMemory,
  now: number,
): Condition {
  const windowMs = (rule.window_minutes ?? 5) * 60_000;
  const minRequests = rule.min_requests ?? 20;
  const maxRatio = rule.max_ratio ?? 1;
  const names = rule.pipelines ?? Object.keys(summary.pipelines);
  const hit: string[] = [];
  const subjects: string[] = [];
  for (const name of names) {
    const counters = summary.pipelines[name] ?? { requests: 0, errors: 0 };
    let samples = memory.samples.get(name);
    if (!samples) memory.samples.set(name, samples = []);
    samples.push({ at: now, requests: counters.requests, errors: counters.errors });
    // The oldest sample still inside the window is the base; older ones go.
    while (samples.length > 1 && samples[0].at < now - windowMs) samples.shift();
    if (samples.length > MAX_SAMPLES) samples.splice(0, samples.length - MAX_SAMPLES);
    const base = samples[0];
    const requests = counters.requests - base.requests;
    const errors = counters.errors - base.errors;
    if (requests < minRequests || requests <= 0) continue;
    const ratio = errors / requests;
    if (ratio > maxRatio) {
      subjects.push(`pipeline/${name}`);
      hit.push(
        `pipeline ${name}: ${errors} of ${requests} requests failed (${
          Math.round(ratio * 1000) / 10
        }%, limit ${Math.round(maxRatio * 1000) / 10}%) in ${rule.window_minutes ?? 5} min`,
      );
    }
  }
  for (const name of [...memory.samples.keys()]) {
    if (!names.includes(name)) memory.samples.delete(name);
  }
  return {
    firing: hit.length > 0,
    subjects,
    summary: hit.length ? listed(hit) : "error ratios within their limit",
  };
}

/** certificate_expiry: a certificate expires within `days` (or expired, or cannot be read). */
export function certificateExpiry(
  rule: AlertRuleConfig,
  certificates: CertificateExpiry[],
  now: number,
): Condition {
  const limit = (rule.days ?? 14) * DAY_MS;
  const hit: string[] = [];
  const subjects: string[] = [];
  for (const c of certificates) {
    if (c.error) {
      subjects.push(c.path);
      hit.push(`certificate ${c.path} ${c.error}`);
      continue;
    }
    const left = c.notAfter! - now;
    if (left >= limit) continue;
    subjects.push(c.path);
    const date = new Date(c.notAfter!).toISOString().slice(0, 10);
    hit.push(
      left <= 0
        ? `certificate ${c.path} (${c.subject}) expired on ${date}`
        : `certificate ${c.path} (${c.subject}) expires in ${
          plural(Math.floor(left / DAY_MS), "day")
        } (${date})`,
    );
  }
  return {
    firing: hit.length > 0,
    subjects,
    summary: hit.length
      ? listed(hit)
      : `${plural(certificates.length, "certificate")} valid for ${rule.days ?? 14} days or more`,
  };
}

/**
 * stuck_worker: a data-plane worker is unresponsive now, or the watchdog replaced one within the
 * last `window_minutes`.
 */
export function stuckWorker(
  rule: AlertRuleConfig,
  workers: ReturnType<AlertSource["workers"]>,
  memory: RuleMemory,
  now: number,
): Condition {
  const windowMs = (rule.window_minutes ?? 15) * 60_000;
  const total = workers.reduce((sum, w) => sum + (w.replacements ?? 0), 0);
  if (memory.replacements !== undefined && total > memory.replacements) memory.replacedAt = now;
  memory.replacements = total;
  const frozen = workers.filter((w) => w.state === "unresponsive");
  const recent = memory.replacedAt !== undefined && now - memory.replacedAt < windowMs;
  const parts = frozen.map((w) => `worker ${w.index} is unresponsive`);
  if (recent) {
    parts.push(
      `the watchdog replaced a worker ${Math.floor((now - memory.replacedAt!) / 60_000)} min ago (${
        plural(total, "replacement")
      } since start)`,
    );
  }
  return {
    firing: parts.length > 0,
    subjects: frozen.map((w) => `worker/${w.index}`).concat(recent ? ["workers"] : []),
    summary: parts.length ? listed(parts) : "every worker answers its heartbeat",
  };
}

/** component_degraded: a component of the gateway is degraded (a queue paused by its disk). */
export function componentDegraded(
  rule: AlertRuleConfig,
  degraded: ReturnType<AlertSource["degraded"]>,
): Condition {
  const names = rule.components;
  const hit = names ? degraded.filter((d) => names.includes(d.component)) : degraded;
  return {
    firing: hit.length > 0,
    subjects: hit.map((d) => d.component),
    summary: hit.length
      ? listed(
        hit.map((d) => `${d.component} degraded since ${d.since}: ${d.reason}`.slice(0, 200)),
      )
      : "no component degraded",
  };
}
