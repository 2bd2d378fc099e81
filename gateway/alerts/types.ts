/** What the alerts read of the gateway, and the shapes of an alert and of a notice. */
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { DegradedComponent, MetricsSummary, QueueSnapshot } from "../observability/mod.ts";

/** The gateway's own state the rules read (implemented by gateway/runtime). */
export interface AlertSource {
  /** The configuration serving now (its `[alerts]`, and the certificates it names). */
  config(): GatewayConfig;
  /** The delivery queues' figures. */
  queueStats(): QueueSnapshot[];
  /** Requests and 5xx answers per pipeline since start. */
  metricsSummary(): MetricsSummary;
  /** Brings the data-plane workers' figures in before `metricsSummary()` is read. */
  collectMetrics?(): Promise<void>;
  /** The data-plane isolates: their state and how often each place was replaced. */
  workers(): { index: number; state?: string; replacements?: number }[];
  /** Components degraded now. */
  degraded(): DegradedComponent[];
}

/** Firing or resolved. */
export type AlertStatus = "firing" | "resolved";

/** One alert: an episode of a rule's condition holding, from firing to resolved. */
export interface Alert {
  /** Unique per episode. */
  id: string;
  rule: string;
  kind: string;
  severity: "critical" | "warning" | "info";
  status: AlertStatus;
  /** When the condition started to hold (ISO 8601). */
  since: string;
  /** When it cleared (ISO 8601), or null. */
  resolved_at: string | null;
  /** One line: what holds (names and figures, never message content). */
  summary: string;
  /** What the condition holds for: queues, pipelines, certificate files, workers, components. */
  subjects: string[];
  /** Channels that were sent a firing notice of this episode. */
  notified: string[];
}

/** What a channel sends. */
export interface Notice {
  /** `firing` (a first notice or a reminder) or `resolved`. */
  status: AlertStatus;
  /** A reminder of an alert that keeps firing (`repeat_minutes`). */
  reminder: boolean;
  /** The gateway's name (`[alerts] gateway_name`). */
  gateway: string;
  /** When the notice was made (ISO 8601). */
  at: string;
  alert: Alert;
}

/** A channel's delivery of notices. */
export interface Sender {
  /** Sends one notice; throws (a message without secrets) when it was not accepted. */
  send(notice: Notice, signal: AbortSignal): Promise<void>;
  /** Releases connections. */
  close(): void;
}
