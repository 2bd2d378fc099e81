/**
 * Alerts (`[alerts]`, docs/operations.md "Alerts"): rules on the gateway's own state (dead
 * letters, a queue's oldest message, a pipeline's error rate, certificates about to expire, a
 * stuck data-plane worker, a degraded component), evaluated on the Clock, each alert going from
 * firing to resolved; notices to webhooks (Slack/Teams-compatible JSON) and by SMTP e-mail with
 * STARTTLS, rate-limited per rule and channel, queued per channel with retries so that a channel
 * that is down never blocks anything.
 *
 * @example
 * ```ts
 * import { AlertEngine, type Notice } from "./mod.ts";
 * import { ManualClock, silentLogger } from "../../shared/mod.ts";
 * import { validateConfigText } from "../../shared/gateway_config/mod.ts";
 *
 * const { config } = validateConfigText(
 *   `[alerts.rules.degraded]
 * kind = "component_degraded"
 * channels = ["ops"]
 * [alerts.channels.ops]
 * type = "webhook"
 * url = "https://hooks.example/alerts"
 * `,
 *   "gateway.toml",
 * );
 * let degraded = [{ component: "queue/his", reason: "disk full", since: "2026-01-01T00:00:00Z" }];
 * const sent: Notice[] = [];
 * const engine = new AlertEngine({
 *   clock: new ManualClock(),
 *   logger: silentLogger,
 *   source: {
 *     config: () => config!,
 *     queueStats: () => [],
 *     metricsSummary: () => ({ pipelines: {}, error_counts: {} }),
 *     workers: () => [],
 *     degraded: () => degraded,
 *   },
 *   // Instead of posting to the webhook, keep what would be sent.
 *   makeSender: () => Promise.resolve({ send: async (n) => void sent.push(n), close() {} }),
 * });
 * await engine.configure(config!);
 * await engine.evaluate();
 * console.log(engine.view().active[0].rule); // degraded
 * degraded = [];
 * await engine.evaluate();
 * await engine.idle(); // the channel's queue sends in the background
 * console.log(sent.map((n) => n.status)); // ["firing", "resolved"]
 * await engine.stop();
 * ```
 *
 * @module
 */
export { AlertEngine, type AlertEngineDeps, type AlertsView } from "./engine.ts";
export type { ChannelStatus, NoticeOutcome } from "./dispatch.ts";
export type { Alert, AlertSource, AlertStatus, Notice, Sender } from "./types.ts";
export { webhookBody } from "./webhook.ts";
export { emailSubject } from "./email.ts";
export { type CertificateExpiry, configCertificatePaths, readExpiry } from "./certificates.ts";
