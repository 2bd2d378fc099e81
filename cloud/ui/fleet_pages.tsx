/** @jsxImportSource hono/jsx */
/**
 * The fleet page: per gateway, request rate, error rate and mean latency over the last hours,
 * drawn from the status reports' time series (store/status_series.ts), and the health of each
 * pipeline and delivery queue from the last report.
 */
import type { Hono } from "hono";
import type { AppEnv } from "../api/mod.ts";
import type { StatusSample } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { page } from "./guard.tsx";
import { LineChart, type Point } from "./charts.tsx";
import { Layout, Status, Table, When } from "./layout.tsx";

/** Gateways charted on one page (each reads up to 1,440 samples for 24 hours). */
export const FLEET_GATEWAYS = 50;

/** The periods the page offers, hours. */
const PERIODS = [1, 6, 24];

/** Rates between consecutive samples. */
export interface FleetRates {
  requestsPerSecond: Point[];
  errorPercent: Point[];
  latencyMs: Point[];
}

interface Totals {
  requests: number;
  errors: number;
  duration: number | null;
}

function totals(s: StatusSample, only?: string): Totals {
  let requests = 0, errors = 0, duration: number | null = 0;
  for (const p of s.pipelines) {
    if (only !== undefined && p.name !== only) continue;
    requests += p.requests;
    errors += p.errors;
    duration = p.duration_ms_sum === undefined || duration === null
      ? null
      : duration + p.duration_ms_sum;
  }
  return { requests, errors, duration };
}

/**
 * Rates from cumulative samples: a restart (uptime or a counter going down) starts the counters
 * again from zero, so the difference is the new sample's own count over its uptime.
 */
export function fleetRates(samples: StatusSample[], pipeline?: string): FleetRates {
  const out: FleetRates = { requestsPerSecond: [], errorPercent: [], latencyMs: [] };
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1], b = samples[i];
    const ta = totals(a, pipeline), tb = totals(b, pipeline);
    const restarted = b.uptime_secs < a.uptime_secs || tb.requests < ta.requests ||
      tb.errors < ta.errors;
    const seconds = restarted
      ? Math.min((b.at - a.at) / 1000, b.uptime_secs)
      : (b.at - a.at) / 1000;
    if (seconds <= 0) continue;
    const requests = restarted ? tb.requests : tb.requests - ta.requests;
    const errors = restarted ? tb.errors : tb.errors - ta.errors;
    out.requestsPerSecond.push([b.at, requests / seconds]);
    out.errorPercent.push([b.at, requests > 0 ? 100 * errors / requests : 0]);
    if (requests > 0 && tb.duration !== null && (restarted || ta.duration !== null)) {
      const spent = restarted ? tb.duration : tb.duration - ta.duration!;
      out.latencyMs.push([b.at, Math.max(0, spent / requests)]);
    }
  }
  return out;
}

/** Mounts `/fleet`. */
export function mountFleetPage(ui: Hono<AppEnv>, s: Services): void {
  ui.get(
    "/fleet",
    page(s, async (c, user) => {
      const hours = PERIODS.includes(Number(c.req.query("hours")))
        ? Number(c.req.query("hours"))
        : 6;
      const to = s.options.clock.now();
      const from = to - hours * 3600_000;
      const all = await s.store.repos.gateways.all(user.team.id);
      const gateways = all.slice(0, FLEET_GATEWAYS);
      const rows = await Promise.all(gateways.map(async (g) => {
        const view = await s.resources.gatewayView(g);
        const samples = await s.store.statusSeries.since(user.team.id, g.id, from);
        return { g, view, samples, rates: fleetRates(samples) };
      }));
      const gap = 5 * 60_000;
      return c.html(
        <Layout title="Fleet" user={user} active="/fleet">
          <h1>Fleet of {user.team.name}</h1>
          <p>
            Period: {PERIODS.map((h) => (
              <a
                key={h}
                href={`/fleet?hours=${h}`}
                aria-current={h === hours ? "page" : undefined}
                class={h === hours ? "active" : ""}
              >
                {h} h{" "}
              </a>
            ))}
            <span class="muted">
              (from the gateways' status reports, one point per minute at most, kept 24 h)
            </span>
          </p>
          {all.length > gateways.length && (
            <p class="muted" data-testid="fleet-more">
              The first {gateways.length} of {all.length} gateways;{" "}
              <a href="/gateways">all gateways</a> lists every one's status.
            </p>
          )}
          {rows.length === 0 && (
            <p class="muted">
              No gateways yet. <a href="/gateways/new">Add one</a>, then authorize it with{" "}
              <code>gwcli gateway:authorize</code>.
            </p>
          )}
          {rows.map(({ g, view, samples, rates }) => {
            const st = view.last_status;
            const queues = (st?.checks ?? []).filter((ch) => ch.name.startsWith("queue"));
            return (
              <section key={g.id} class="card" data-testid={`fleet-${g.code}`}>
                <h2>
                  <a href={`/gateways/${g.id}`}>{g.code}</a> <Status status={view.status} />
                </h2>
                <p class="muted">
                  Last seen <When at={view.last_seen_at} /> · health {st?.health ?? "unknown"} ·
                  {" "}
                  {samples.length} reports in the period
                </p>
                <div class="charts">
                  <LineChart
                    title="Requests"
                    unit="req/s"
                    points={rates.requestsPerSecond}
                    from={from}
                    to={to}
                    gapMs={gap}
                    testId="chart-requests"
                  />
                  <LineChart
                    title="Errors"
                    unit="% 5xx"
                    points={rates.errorPercent}
                    from={from}
                    to={to}
                    gapMs={gap}
                    kind="err"
                    testId="chart-errors"
                  />
                  <LineChart
                    title="Mean latency"
                    unit="ms"
                    points={rates.latencyMs}
                    from={from}
                    to={to}
                    gapMs={gap}
                    testId="chart-latency"
                  />
                </div>
                <Table
                  head={["Pipeline", "Requests/s (period)", "5xx % (period)", "Total requests"]}
                  empty="No pipeline counters reported."
                  testId="fleet-pipelines"
                  rows={(st?.pipelines ?? []).map((p) => {
                    const r = fleetRates(
                      samples.length > 1 ? [samples[0], samples.at(-1)!] : samples,
                      p.name,
                    );
                    const rps = r.requestsPerSecond[0]?.[1];
                    const err = r.errorPercent[0]?.[1];
                    return [
                      p.name,
                      rps === undefined ? "—" : rps.toFixed(2),
                      err === undefined ? "—" : `${err.toFixed(1)} %`,
                      p.requests,
                    ];
                  })}
                />
                {queues.length > 0 && (
                  <Table
                    head={["Queue", "State", "Detail"]}
                    empty=""
                    testId="fleet-queues"
                    rows={queues.map((q) => [q.name, q.status, q.message ?? ""])}
                  />
                )}
              </section>
            );
          })}
        </Layout>,
      );
    }),
  );
}
