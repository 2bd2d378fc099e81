/** @jsxImportSource hono/jsx */
/**
 * The alerts of a gateway's last status report, on its page: firing ones first, then the latest
 * resolved ones (docs/operations.md, "Alerts"). Metadata only, as the gateway sent it and the API
 * bounded it: rule, kind, severity, since, resolved, summary; never message content.
 */
import type { GatewayAlertSummary } from "../../../shared/mod.ts";
import { Table, When } from "../layout.tsx";

/** The alerts section of a gateway's page. */
export function GatewayAlerts(props: { alerts: GatewayAlertSummary[] }) {
  const firing = props.alerts.filter((a) => a.resolved_at === null);
  const resolved = props.alerts.filter((a) => a.resolved_at !== null);
  return (
    <section data-testid="gateway-alerts">
      <h2>Alerts</h2>
      <p class="muted">
        {firing.length === 0
          ? "No alert is firing."
          : `${firing.length} alert${firing.length === 1 ? "" : "s"} firing.`}{" "}
        As of the last status report; the gateway's <code>[alerts]</code>{" "}
        decide what fires and who is told.
      </p>
      {props.alerts.length > 0 && (
        <Table
          head={["State", "Severity", "Rule", "Kind", "Since", "Resolved", "Summary"]}
          empty="No alerts."
          rows={[...firing, ...resolved].map((a) => [
            a.resolved_at === null ? <strong key="state">firing</strong> : "resolved",
            a.severity,
            <code key="rule">{a.rule}</code>,
            a.kind,
            <When key="since" at={a.since} />,
            a.resolved_at === null ? "—" : <When key="resolved" at={a.resolved_at} />,
            a.summary,
          ])}
        />
      )}
    </section>
  );
}
