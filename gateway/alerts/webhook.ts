/**
 * The `webhook` channel: each notice is POSTed as JSON in a shape Slack and Microsoft Teams
 * incoming webhooks accept (`text`, plus Slack `attachments` with one field per fact, or with
 * `format = "teams"` an Adaptive Card as Teams Workflows expect), with the alert itself under
 * `alert` for any other receiver. A 2xx answer is delivery; anything else, a
 * timeout or a refused connection is a failure whose message names no secret (the URL of a Slack
 * or Teams webhook is one, and so are the configured header values).
 */
import type { AlertChannelConfig } from "../../shared/gateway_config/mod.ts";
import { noticeFields, noticeTitle, withoutSecrets } from "./notice_text.ts";
import type { Notice, Sender } from "./types.ts";

/** Colours of the Slack attachment by state and severity. */
function colour(notice: Notice): string {
  if (notice.status === "resolved") return "#2eb67d";
  return notice.alert.severity === "critical"
    ? "#e01e5a"
    : notice.alert.severity === "warning"
    ? "#ecb22e"
    : "#36c5f0";
}

/** The attachments of a notice: Slack's fields, or a Teams Adaptive Card. */
function attachments(notice: Notice, format: "slack" | "teams"): unknown[] {
  const title = noticeTitle(notice);
  if (format === "teams") {
    return [{
      contentType: "application/vnd.microsoft.card.adaptive",
      content: {
        $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
        type: "AdaptiveCard",
        version: "1.4",
        body: [
          {
            type: "TextBlock",
            text: title,
            weight: "Bolder",
            wrap: true,
            color: notice.status === "resolved"
              ? "Good"
              : notice.alert.severity === "critical"
              ? "Attention"
              : "Warning",
          },
          {
            type: "FactSet",
            facts: noticeFields(notice).map((f) => ({ title: f.title, value: f.value })),
          },
        ],
      },
    }];
  }
  return [{
    color: colour(notice),
    fallback: title,
    fields: noticeFields(notice).map((f) => ({
      title: f.title,
      value: f.value,
      short: f.title !== "Subjects",
    })),
  }];
}

/** The JSON body of a notice in `format` (default `slack`). */
export function webhookBody(
  notice: Notice,
  format: "slack" | "teams" = "slack",
): Record<string, unknown> {
  return {
    ...(format === "teams" ? { type: "message" } : {}),
    text: noticeTitle(notice),
    attachments: attachments(notice, format),
    alert: {
      gateway: notice.gateway,
      status: notice.status,
      reminder: notice.reminder,
      at: notice.at,
      id: notice.alert.id,
      rule: notice.alert.rule,
      kind: notice.alert.kind,
      severity: notice.alert.severity,
      since: notice.alert.since,
      resolved_at: notice.alert.resolved_at,
      summary: notice.alert.summary,
      subjects: notice.alert.subjects,
    },
  };
}

/** A webhook channel's sender. */
export function webhookSender(channel: AlertChannelConfig): Sender {
  const url = channel.url!;
  const parsed = new URL(url);
  const secrets = [
    url,
    parsed.pathname.length > 1 ? parsed.pathname : undefined,
    parsed.search || undefined,
    ...Object.values(channel.headers ?? {}),
  ];
  const headers = new Headers(channel.headers ?? {});
  headers.set("content-type", "application/json");
  return {
    async send(notice, signal) {
      let res: Response;
      try {
        res = await fetch(url, {
          method: "POST",
          headers,
          body: JSON.stringify(webhookBody(notice, channel.format ?? "slack")),
          // A redirect could carry the notice (and its headers) to another host.
          redirect: "manual",
          signal,
        });
      } catch (err) {
        const reason = signal.aborted ? "timed out" : (err as Error).message;
        throw new Error(`webhook ${parsed.host} unreachable: ${withoutSecrets(reason, secrets)}`);
      }
      await res.body?.cancel().catch(() => {});
      if (res.status < 200 || res.status > 299) {
        throw new Error(`webhook ${parsed.host} answered ${res.status}`);
      }
    },
    close() {},
  };
}
