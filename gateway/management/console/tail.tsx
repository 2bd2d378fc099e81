/** @jsxImportSource hono/jsx */
// Rendered once on the server (no client-side reconciliation): list items need no keys.
// deno-lint-ignore-file jsx-key
/**
 * The live tail of finished requests, filtered by pipeline and status. With script, the console's
 * script streams them from `tail/events` (server-sent events); without, the filter form asks the
 * server to capture the next seconds (`tail/capture`) and shows what came.
 */
import type { RequestEvent } from "../../pipeline/mod.ts";
import { Layout, type PageContext } from "./layout.tsx";

/** What the tail shows. */
export interface TailFilter {
  /** A pipeline's name, or "" for all. */
  pipeline: string;
  /** `""` (all), `2xx`, `3xx`, `4xx`, `5xx`, `errors` (400 and above) or one status code. */
  status: string;
}

/** The status choices of the filter. */
export const STATUS_FILTERS: [string, string][] = [
  ["", "Any status"],
  ["errors", "Errors (4xx and 5xx)"],
  ["2xx", "2xx"],
  ["3xx", "3xx"],
  ["4xx", "4xx"],
  ["5xx", "5xx"],
];

/** The filter of a query string, checked (unknown values mean "all"). */
export function tailFilter(query: (name: string) => string | undefined): TailFilter {
  const pipeline = (query("pipeline") ?? "").slice(0, 200);
  const status = query("status") ?? "";
  const ok = STATUS_FILTERS.some(([v]) => v === status) || /^[1-5]\d\d$/.test(status);
  return { pipeline, status: ok ? status : "" };
}

/** True when `event` passes `filter`. */
export function matches(event: RequestEvent, filter: TailFilter): boolean {
  if (filter.pipeline && event.pipeline !== filter.pipeline) return false;
  const s = filter.status;
  if (!s) return true;
  if (s === "errors") return event.status >= 400;
  if (/^[1-5]xx$/.test(s)) return Math.floor(event.status / 100) === Number(s[0]);
  return event.status === Number(s);
}

/** The tail page (with what a capture caught, when it ran). */
export function TailPage(
  { ctx, pipelines, filter, captured, seconds, limit }: {
    ctx: PageContext;
    pipelines: string[];
    filter: TailFilter;
    captured?: RequestEvent[];
    seconds: number;
    limit: number;
  },
) {
  return (
    <Layout title="Live tail" ctx={ctx} active="/tail">
      <h1>Live tail</h1>
      <p class="muted">
        Requests as they finish, on every data-plane isolate: the access log's fields (method, path
        as logged, status, duration), never a body.
      </p>
      <form
        id="tail-filters"
        method="get"
        action={`${ctx.base}/tail/capture`}
        class="row card"
        aria-label="Filters of the live tail"
      >
        <div>
          <label for="tail-pipeline">Pipeline</label>
          <select id="tail-pipeline" name="pipeline">
            <option value="">All pipelines</option>
            {pipelines.map((p) => <option value={p} selected={p === filter.pipeline}>{p}</option>)}
          </select>
        </div>
        <div>
          <label for="tail-status">Status</label>
          <select id="tail-status" name="status">
            {STATUS_FILTERS.map(([v, label]) => (
              <option value={v} selected={v === filter.status}>{label}</option>
            ))}
          </select>
        </div>
        <div>
          <label for="tail-seconds">Capture for (s)</label>
          <input id="tail-seconds" name="seconds" type="number" min="1" max="30" value={seconds} />
        </div>
        <div>
          <label for="tail-limit">Stop after</label>
          <input id="tail-limit" name="limit" type="number" min="1" max="500" value={limit} />
        </div>
        <div>
          <button type="submit">Apply</button>{" "}
          <button type="button" id="tail-pause" class="secondary" aria-pressed="false" hidden>
            Pause
          </button>
        </div>
      </form>
      <p>
        <span id="tail-state" class="muted tail-state" role="status" aria-live="polite">
          {captured
            ? `Captured ${captured.length} request(s).`
            : "Without script: Apply captures the next seconds of traffic."}
        </span>
      </p>
      <table data-testid="tail">
        <caption class="sr-only">Finished requests, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Pipeline</th>
            <th scope="col">Method</th>
            <th scope="col">Path</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">ms</th>
            <th scope="col">Error</th>
            <th scope="col">Request id</th>
          </tr>
        </thead>
        <tbody id="tail-rows" data-events={`${ctx.base}/tail/events`}>
          {captured?.length
            ? [...captured].reverse().map((e) => (
              <tr>
                <td>{e.at.replace("T", " ").slice(0, 23)}</td>
                <td>{e.pipeline}</td>
                <td>{e.fields.method ?? e.fields.operation ?? e.fields.message_type ?? ""}</td>
                <td>{e.fields.path ?? e.fields.endpoint ?? ""}</td>
                <td
                  class={`badge ${
                    e.status >= 500 ? "badge-bad" : e.status >= 400 ? "badge-warn" : "badge-ok"
                  }`}
                >
                  {e.status}
                </td>
                <td class="num">{e.duration_ms.toFixed(1)}</td>
                <td>{e.error_code ?? ""}</td>
                <td>{e.request_id}</td>
              </tr>
            ))
            : (
              <tr id="tail-empty">
                <td colspan={8} class="muted">No request yet.</td>
              </tr>
            )}
        </tbody>
      </table>
    </Layout>
  );
}
