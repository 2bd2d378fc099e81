/** @jsxImportSource hono/jsx */
// Rendered once on the server (no client-side reconciliation): list items need no keys.
// deno-lint-ignore-file jsx-key
/**
 * The dashboard: per pipeline its requests per second, 5xx rate, mean latency, requests in
 * flight, queue depth and dead letters of its queued backends, targets down, and its last error;
 * then the delivery queues. htmx refreshes it every 5 s; without script, reload the page.
 */
import type { QueueStats } from "../../delivery/mod.ts";
import type { PipelineError } from "../../pipeline/mod.ts";
import type { MetricsSummary } from "../../observability/mod.ts";
import type { PipelineInfo } from "../control.ts";
import { Badge, Layout, type PageContext, Table, When } from "./layout.tsx";
import { type PipelineRate, shortRate } from "./rates.ts";

/** What the dashboard shows. */
export interface DashboardData {
  pipelines: PipelineInfo[];
  summary: MetricsSummary;
  rates: Map<string, PipelineRate>;
  queues: QueueStats[];
  lastErrors: Map<string, PipelineError>;
  uptimeSecs: number;
  ready: boolean;
}

function ms(v: number | null): string {
  if (v === null) return "—";
  return v >= 100 ? v.toFixed(0) : v.toFixed(1);
}

function age(secs: number): string {
  if (secs <= 0) return "—";
  if (secs < 120) return `${Math.round(secs)} s`;
  if (secs < 7200) return `${Math.round(secs / 60)} min`;
  return `${(secs / 3600).toFixed(1)} h`;
}

/** The dashboard's content (also what htmx swaps in on refresh). */
export function DashboardBody({ ctx, data }: { ctx: PageContext; data: DashboardData }) {
  const queueOf = new Map(data.queues.map((q) => [q.backend, q]));
  let requests = 0;
  let errors = 0;
  let inFlight = 0;
  for (const p of Object.values(data.summary.pipelines)) {
    requests += p.requests;
    errors += p.errors;
    inFlight += p.in_flight;
  }
  const dead = data.queues.reduce((n, q) => n + q.dead, 0);
  const waiting = data.queues.reduce((n, q) => n + q.depth, 0);
  const window = [...data.rates.values()][0];
  return (
    <div
      id="dashboard"
      hx-get={ctx.base}
      hx-trigger="every 5s"
      hx-select="#dashboard"
      hx-swap="outerHTML"
    >
      <div class="tiles" data-testid="tiles">
        <div class="tile">
          <div class="muted">State</div>
          <div class="value">
            {data.ready ? <Badge kind="ok" text="ready" /> : <Badge kind="bad" text="not ready" />}
          </div>
        </div>
        <div class="tile">
          <div class="muted">Requests since start</div>
          <div class="value" data-testid="total-requests">{requests}</div>
        </div>
        <div class="tile">
          <div class="muted">5xx answers</div>
          <div class="value">{errors}</div>
        </div>
        <div class="tile">
          <div class="muted">In flight</div>
          <div class="value">{inFlight}</div>
        </div>
        <div class="tile">
          <div class="muted">Waiting in queues</div>
          <div class="value">{waiting}</div>
        </div>
        <div class="tile">
          <div class="muted">Dead letters</div>
          <div class="value" data-testid="total-dead">
            {dead > 0 ? <a href={`${ctx.base}/dead-letters`}>{dead}</a> : 0}
          </div>
        </div>
      </div>
      <h2>Pipelines</h2>
      <p class="muted" data-testid="rate-window">
        {window && !window.sinceStart
          ? `Rates over the last ${Math.round(window.windowSecs)} s`
          : "Rates since the gateway started"}{" "}
        (the page refreshes every 5 s; without script, reload it).
      </p>
      <Table
        caption="Pipelines"
        testId="pipelines"
        head={[
          "Pipeline",
          "Req/s",
          "5xx/s",
          "Mean latency (ms)",
          "In flight",
          "Queue depth",
          "Dead letters",
          "Targets down",
          "Last error",
        ]}
        empty="No pipeline is configured."
        rows={data.pipelines.map((p) => {
          const rate = data.rates.get(p.name);
          const counters = data.summary.pipelines[p.name];
          const queues = p.backends.map((b) => queueOf.get(b.name)).filter((q) => q !== undefined);
          const depth = queues.reduce((n, q) => n + q.depth, 0);
          const deadHere = queues.reduce((n, q) => n + q.dead, 0);
          const oldest = Math.max(0, ...queues.map((q) => q.oldest_age_secs));
          const down = p.backends.flatMap((b) => b.targets).filter((t) => !t.healthy).length;
          const last = data.lastErrors.get(p.name);
          return [
            <span data-testid={`pipeline-${p.name}`}>
              <strong>{p.name}</strong>
              <br />
              <span class="muted">{p.endpoints.join(", ")}</span>
            </span>,
            <span data-testid={`rps-${p.name}`}>{shortRate(rate?.rps ?? 0)}</span>,
            rate && rate.errorsPerSec > 0
              ? <Badge kind="bad" text={shortRate(rate.errorsPerSec)} />
              : "0",
            ms(rate?.meanLatencyMs ?? null),
            counters?.in_flight ?? 0,
            queues.length
              ? <span>{depth}{depth > 0 && <span class="muted">(oldest {age(oldest)})</span>}</span>
              : <span class="muted">no queue</span>,
            queues.length
              ? (deadHere > 0
                ? <a href={`${ctx.base}/dead-letters`} data-testid={`dead-${p.name}`}>{deadHere}</a>
                : <span data-testid={`dead-${p.name}`}>0</span>)
              : <span class="muted">—</span>,
            down > 0 ? <Badge kind="bad" text={String(down)} /> : "0",
            last
              ? (
                <span data-testid={`last-error-${p.name}`}>
                  <Badge kind={last.status >= 500 ? "bad" : "warn"} text={String(last.status)} />
                  {" "}
                  <code>{last.code}</code> <When at={last.at} />
                  <br />
                  <span class="muted">{last.message.slice(0, 200)}</span>
                </span>
              )
              : <span class="muted">none</span>,
          ];
        })}
      />
      <h2>Delivery queues</h2>
      <Table
        caption="Delivery queues"
        testId="queues"
        head={[
          "Backend",
          "Waiting",
          "Oldest",
          "In flight",
          "Retrying",
          "Dead",
          "Delivered",
          "State",
        ]}
        empty="No backend has a delivery queue ([backends.<name>.queue])."
        rows={data.queues.map((q) => [
          <strong>{q.backend}</strong>,
          q.depth,
          age(q.oldest_age_secs),
          q.in_flight,
          q.retrying,
          q.dead > 0
            ? (
              <a href={`${ctx.base}/dead-letters?backend=${encodeURIComponent(q.backend)}`}>
                {q.dead}
              </a>
            )
            : 0,
          q.delivered_total,
          q.degraded
            ? <Badge kind="bad" text={`paused: ${q.degraded.reason}`} />
            : <Badge kind="ok" text="running" />,
        ])}
      />
    </div>
  );
}

/** The dashboard page. */
export function DashboardPage({ ctx, data }: { ctx: PageContext; data: DashboardData }) {
  return (
    <Layout title="Dashboard" ctx={ctx} active="">
      <h1>Dashboard</h1>
      <DashboardBody ctx={ctx} data={data} />
    </Layout>
  );
}
