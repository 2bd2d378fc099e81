/**
 * The words of a notice, shared by the channels: a one-line title (a webhook's `text`, an
 * e-mail's subject) and the fields (rule, kind, severity, since, resolved, subjects).
 */
import type { Notice } from "./types.ts";

/** Subjects shown in one notice; the rest are counted. */
const SUBJECTS_SHOWN = 20;

/** `[FIRING] critical · edge-1 · dead_letters_his: queue his holds 3 dead letters`. */
export function noticeTitle(notice: Notice): string {
  const state = notice.status === "resolved"
    ? "RESOLVED"
    : notice.reminder
    ? "STILL FIRING"
    : "FIRING";
  return `[${state}] ${notice.alert.severity} · ${notice.gateway} · ${notice.alert.rule}: ${notice.alert.summary}`;
}

/** The fields of a notice, in the order they are shown. */
export function noticeFields(notice: Notice): { title: string; value: string }[] {
  const a = notice.alert;
  const subjects = a.subjects.slice(0, SUBJECTS_SHOWN).join(", ") +
    (a.subjects.length > SUBJECTS_SHOWN ? ` and ${a.subjects.length - SUBJECTS_SHOWN} more` : "");
  return [
    { title: "Gateway", value: notice.gateway },
    { title: "Rule", value: a.rule },
    { title: "Kind", value: a.kind },
    { title: "Severity", value: a.severity },
    { title: "Status", value: notice.status },
    { title: "Since", value: a.since },
    ...(a.resolved_at ? [{ title: "Resolved", value: a.resolved_at }] : []),
    ...(subjects ? [{ title: "Subjects", value: subjects }] : []),
  ];
}

/** The notice as plain text (an e-mail's body). */
export function noticeBody(notice: Notice): string {
  const width = Math.max(...noticeFields(notice).map((f) => f.title.length));
  return [
    noticeTitle(notice),
    "",
    ...noticeFields(notice).map((f) => `${(f.title + ":").padEnd(width + 2)}${f.value}`),
    "",
    'Sent by the gateway\'s alerts (docs/operations.md, "Alerts"); GET /{prefix}/alerts or ' +
    "`gwcli alerts` lists what fires now.",
    "",
  ].join("\n");
}

/** `message` with every occurrence of each secret replaced (an error text that echoes a URL). */
export function withoutSecrets(message: string, secrets: readonly (string | undefined)[]): string {
  let out = message;
  for (const s of secrets) {
    if (s && s.length >= 4) out = out.split(s).join("<redacted>");
  }
  return out;
}
