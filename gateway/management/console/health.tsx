/** @jsxImportSource hono/jsx */
// Rendered once on the server (no client-side reconciliation): list items need no keys.
// deno-lint-ignore-file jsx-key
/**
 * The health page: readiness and degraded components, the data-plane isolates (the watchdog's
 * view), the listeners (HTTP, HTTP/3, DIMSE, MLLP, management), the link to the cloud, and the
 * configured certificates with their expiry.
 */
import type { CloudInfo } from "../../cloud_client/mod.ts";
import type { DegradedComponent } from "../../observability/mod.ts";
import type { RouteInfo, WorkerStatus } from "../control.ts";
import type { InstanceInfo } from "../info.ts";
import type { CertificateInfo, CertificateProblem } from "./certificates.ts";
import { Badge, Layout, type PageContext, Table, When } from "./layout.tsx";

/** What the health page shows. */
export interface HealthData {
  info: InstanceInfo;
  ready: boolean;
  degraded: DegradedComponent[];
  workers: WorkerStatus[];
  routes: RouteInfo[];
  cloud: CloudInfo;
  certificates: CertificateInfo[];
  certificateProblems: CertificateProblem[];
  managementTls: boolean;
}

function duration(secs: number): string {
  const d = Math.floor(secs / 86400);
  const h = Math.floor((secs % 86400) / 3600);
  const m = Math.floor((secs % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min ${secs % 60} s`;
}

/** The health page. */
export function HealthPage({ ctx, data }: { ctx: PageContext; data: HealthData }) {
  const { info, cloud } = data;
  const sync = cloud.sync;
  return (
    <Layout title="Health" ctx={ctx} active="/health">
      <h1>Health</h1>
      <div class="card">
        <dl class="fields" data-testid="instance">
          <div>
            <dt>State</dt>
            <dd>
              {data.ready
                ? <Badge kind="ok" text="ready" />
                : <Badge kind="bad" text="not ready" />}
            </dd>
          </div>
          <div>
            <dt>Version</dt>
            <dd>
              {info.version} (Deno {info.platform.deno}, {info.platform.os}/{info.platform.arch})
            </dd>
          </div>
          <div>
            <dt>Up since</dt>
            <dd>
              <When at={info.started_at} /> ({duration(info.uptime_seconds)})
            </dd>
          </div>
          <div>
            <dt>Configuration</dt>
            <dd>
              {info.config_file ?? "embedded default"}, generation {info.config_generation ?? "—"}
            </dd>
          </div>
          <div>
            <dt>Process</dt>
            <dd>pid {info.pid}</dd>
          </div>
        </dl>
      </div>

      <h2>Degraded components</h2>
      <Table
        caption="Degraded components"
        testId="degraded"
        head={["Component", "Why", "Since"]}
        empty="None: every component works."
        rows={data.degraded.map((d) => [d.component, d.reason, <When at={d.since} />])}
      />

      <h2>Workers</h2>
      <Table
        caption="Data-plane isolates"
        testId="workers"
        head={["Isolate", "State", "Generation", "Requests", "Heartbeat age", "Replaced"]}
        empty="No data-plane isolate reported."
        rows={data.workers.map((w) => [
          w.index === 0 ? "0 (main thread)" : String(w.index),
          w.state === "unresponsive" || w.healthy === false
            ? <Badge kind="bad" text={w.state ?? "unhealthy"} />
            : w.state === "starting"
            ? <Badge kind="warn" text="starting" />
            : <Badge kind="ok" text={w.state ?? "serving"} />,
          w.generation,
          w.requests ?? "—",
          w.heartbeat_age_ms === null || w.heartbeat_age_ms === undefined
            ? "—"
            : `${w.heartbeat_age_ms} ms`,
          w.replacements ?? 0,
        ])}
      />

      <h2>Listeners</h2>
      <Table
        caption="Listeners"
        testId="listeners"
        head={["Listener", "Address", "Protocol", "Serves"]}
        empty="No listener."
        rows={[
          ...info.listeners.map((l) => [
            `network ${l.network}`,
            `${l.bind}:${l.port}`,
            l.tls ? "HTTPS (h2, http/1.1)" : "HTTP/1.1 (h2c)",
            data.routes.filter((r) => r.networks.includes(l.network)).map((r) => r.path).join(
              ", ",
            ) || "—",
          ]),
          ...info.listeners.filter((l) => l.http3).map((l) => [
            `network ${l.network} (HTTP/3)`,
            `${l.http3!.bind}:${l.http3!.port}/udp`,
            "HTTP/3 (QUIC)",
            "same endpoints",
          ]),
          ...data.routes.filter((r) => r.dimse).map((r) => [
            `endpoint ${r.endpoint}`,
            `${r.dimse!.bind}:${r.dimse!.port}`,
            `DIMSE (AE ${r.dimse!.local_aet})`,
            r.dimse!.services.join(", "),
          ]),
          ...data.routes.filter((r) => r.mllp).map((r) => [
            `endpoint ${r.endpoint}`,
            `${r.mllp!.bind}:${r.mllp!.port}`,
            r.mllp!.tls ? "MLLP over TLS" : "MLLP",
            `pipeline ${r.pipeline}`,
          ]),
          [
            "management",
            `${info.management.bind}:${info.management.port}`,
            data.managementTls ? "HTTPS" : "HTTP",
            `/${info.management.prefix} (API and this console)`,
          ],
        ]}
      />

      <h2>Cloud link</h2>
      <div class="card" data-testid="cloud">
        {cloud.enabled
          ? (
            <dl class="fields">
              <div>
                <dt>Cloud</dt>
                <dd>{cloud.url ?? "—"}</dd>
              </div>
              <div>
                <dt>Gateway</dt>
                <dd>{cloud.gateway_code} {cloud.gateway_id ? `(${cloud.gateway_id})` : ""}</dd>
              </div>
              <div>
                <dt>Machine token</dt>
                <dd>
                  {cloud.authorized
                    ? (
                      <span>
                        <Badge
                          kind={cloud.verified ? "ok" : "warn"}
                          text={cloud.verified ? "verified" : "held, not verified yet"}
                        />{" "}
                        expires <When at={cloud.token_expires_at} />, renews{" "}
                        <When at={cloud.token_renews_at} />
                      </span>
                    )
                    : <Badge kind="bad" text="none: run gwcli gateway:authorize" />}
                </dd>
              </div>
              <div>
                <dt>Sync</dt>
                <dd>
                  {sync.state}, configuration version {sync.config_version ?? "—"}
                </dd>
              </div>
              <div>
                <dt>Last pull</dt>
                <dd>
                  <When at={sync.last_pull_at} />
                </dd>
              </div>
              <div>
                <dt>Last status report</dt>
                <dd>
                  <When at={sync.last_status_report_at} />
                </dd>
              </div>
              <div>
                <dt>Last error</dt>
                <dd>
                  {sync.last_error
                    ? (
                      <span>
                        <When at={sync.last_error.at} /> {sync.last_error.message}
                      </span>
                    )
                    : <span class="muted">none</span>}
                </dd>
              </div>
            </dl>
          )
          : <p class="muted">The cloud integration is off ([cloud] enabled = false).</p>}
      </div>

      <h2>Certificates</h2>
      <Table
        caption="Certificates"
        testId="certificates"
        head={["Setting", "Subject", "Issuer", "Expires", "State"]}
        empty="The configuration names no certificate."
        rows={data.certificates.map((c) => [
          <span>
            <code>{c.setting}</code>
            {c.index > 0 && <span class="muted">(chain #{c.index})</span>}
            <br />
            <span class="muted">{c.file}</span>
          </span>,
          c.subject,
          c.issuer,
          <When at={c.not_after} />,
          c.state === "expired"
            ? <Badge kind="bad" text="expired" />
            : c.state === "expiring"
            ? (
              <Badge
                kind="warn"
                text={c.days_left < 1 ? "expires within a day" : `expires in ${c.days_left} d`}
              />
            )
            : <Badge kind="ok" text={`${c.days_left} d left`} />,
        ])}
      />
      {data.certificateProblems.length > 0 && (
        <div class="flash flash-error" role="alert" data-testid="certificate-problems">
          {data.certificateProblems.map((p) => (
            <p>
              <code>{p.setting}</code> ({p.file}): {p.message}
            </p>
          ))}
        </div>
      )}
    </Layout>
  );
}
