/** @jsxImportSource hono/jsx */
// Rendered once on the server (no client-side reconciliation): list items need no keys.
// deno-lint-ignore-file jsx-key
/**
 * Message tracking in the console: the browser (search by time, pipeline, status and any
 * metadata field, paged newest first), one message with its metadata and backends, its stages
 * side by side when an operator asks for the content (JSON and XML pretty, DICOM as a tag table,
 * binary as hex and size; each view is audited), replay (to the pipeline or one backend) and
 * edit-and-resend, whose outcome page says what the pipeline answered.
 */
import type {
  ContentView,
  ReplayOutcome,
  StageContent,
  TrackedMessage,
  TrackedMessageDetail,
  TrackingStatus,
} from "../../tracking/mod.ts";
import {
  Badge,
  Csrf,
  Flash,
  Layout,
  type PageContext,
  StatusCode,
  Table,
  When,
} from "./layout.tsx";
import { prettyJson, prettyXml } from "./pretty.ts";

/** The search form's values (as given; empty when not set). */
export interface MessageSearch {
  from: string;
  to: string;
  pipeline: string;
  status: string;
  /** Up to two metadata criteria. */
  fields: [string, string][];
  cursor: string;
}

/** Metadata fields offered by the search form (the tracking store's aliases). */
export const FIELD_CHOICES: [string, string][] = [
  ["patient_id", "Patient id"],
  ["accession", "Accession number"],
  ["study_uid", "Study UID"],
  ["series_uid", "Series UID"],
  ["sop_uid", "SOP instance UID"],
  ["control_id", "HL7 control id"],
  ["message_type", "HL7 message type"],
  ["calling_aet", "Calling AE title"],
  ["subject", "Authenticated subject"],
  ["delivery_id", "Delivery id"],
  ["fhir_type", "FHIR resource type"],
  ["fhir_id", "FHIR id"],
];

const STATUS_CHOICES: [string, string][] = [
  ["", "Any status"],
  ["error", "Errors (400 and above)"],
  ["2xx", "2xx"],
  ["4xx", "4xx"],
  ["5xx", "5xx"],
];

/** The search of a query string, bounded. */
export function messageSearch(query: (name: string) => string | undefined): MessageSearch {
  const get = (name: string, max = 200) => (query(name) ?? "").trim().slice(0, max);
  const fields: [string, string][] = [];
  for (const i of [1, 2]) {
    const name = get(`field${i}`, 100);
    const value = get(`value${i}`, 1024);
    if (name && value && /^[A-Za-z0-9_.-]+$/.test(name)) fields.push([name, value]);
  }
  const status = get("status", 10);
  return {
    from: get("from", 40),
    to: get("to", 40),
    pipeline: get("pipeline"),
    status: /^(error|[1-5]xx|[1-5]\d\d)$/.test(status) ? status : "",
    fields,
    cursor: get("cursor", 400),
  };
}

/** `datetime-local` values are the browser's local time without a zone: read them as UTC. */
export function timeOf(value: string): string | undefined {
  if (!value) return undefined;
  const iso = /Z$|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

function searchQuery(s: MessageSearch, cursor?: string): string {
  const q = new URLSearchParams();
  if (s.from) q.set("from", s.from);
  if (s.to) q.set("to", s.to);
  if (s.pipeline) q.set("pipeline", s.pipeline);
  if (s.status) q.set("status", s.status);
  s.fields.forEach(([k, v], i) => {
    q.set(`field${i + 1}`, k);
    q.set(`value${i + 1}`, v);
  });
  if (cursor) q.set("cursor", cursor);
  return q.toString();
}

/** The page shown when the gateway keeps no tracking. */
function NotTracking({ status }: { status: TrackingStatus | undefined }) {
  return (
    <div class="card" data-testid="tracking-off">
      <p>
        {status?.enabled === false || !status
          ? "Message tracking is off in this gateway."
          : "No pipeline tracks its messages yet."} Turn it on per pipeline with{" "}
        <code>[pipelines.&lt;name&gt;.tracking]</code> (docs/operations.md, "Message tracking").
      </p>
    </div>
  );
}

/** The message browser. */
export function MessagesPage(
  { ctx, status, search, pipelines, messages, nextCursor, error }: {
    ctx: PageContext;
    status: TrackingStatus | undefined;
    search: MessageSearch;
    pipelines: string[];
    messages: TrackedMessage[];
    nextCursor: string | null;
    error?: string;
  },
) {
  const tracking = status?.enabled && status.pipelines.length > 0;
  const fieldRow = (i: number) => {
    const [name, value] = search.fields[i - 1] ?? ["", ""];
    return (
      <div class="row">
        <div>
          <label for={`field${i}`}>Field {i}</label>
          <select id={`field${i}`} name={`field${i}`}>
            <option value="">—</option>
            {FIELD_CHOICES.map(([v, label]) => (
              <option value={v} selected={v === name}>{label}</option>
            ))}
          </select>
        </div>
        <div>
          <label for={`value${i}`}>Value {i}</label>
          <input id={`value${i}`} name={`value${i}`} type="text" value={value} />
        </div>
      </div>
    );
  };
  return (
    <Layout title="Messages" ctx={ctx} active="/messages">
      <h1>Messages</h1>
      {!tracking && <NotTracking status={status} />}
      <Flash kind="error" message={error} />
      <form
        method="get"
        action={`${ctx.base}/messages`}
        class="card"
        aria-label="Search messages"
        hx-get={`${ctx.base}/messages`}
        hx-target="#message-results"
        hx-select="#message-results"
        hx-swap="outerHTML"
        hx-push-url="true"
      >
        <div class="row">
          <div>
            <label for="m-pipeline">Pipeline</label>
            <select id="m-pipeline" name="pipeline">
              <option value="">All pipelines</option>
              {pipelines.map((p) => <option value={p} selected={p === search.pipeline}>{p}
              </option>)}
            </select>
          </div>
          <div>
            <label for="m-status">Status</label>
            <select id="m-status" name="status">
              {STATUS_CHOICES.map(([v, label]) => (
                <option value={v} selected={v === search.status}>{label}</option>
              ))}
            </select>
          </div>
          <div>
            <label for="m-from">From (UTC)</label>
            <input id="m-from" name="from" type="datetime-local" value={search.from} />
          </div>
          <div>
            <label for="m-to">Until (UTC)</label>
            <input id="m-to" name="to" type="datetime-local" value={search.to} />
          </div>
          {fieldRow(1)}
          {fieldRow(2)}
        </div>
        <p>
          <button type="submit">Search</button> <a href={`${ctx.base}/messages`}>Clear</a>
        </p>
      </form>
      <div id="message-results">
        <Table
          caption="Tracked messages, newest first"
          testId="messages"
          head={["Time", "Pipeline", "Request", "Status", "ms", "Backends", "Identifiers"]}
          empty="No tracked message matches."
          rows={messages.map((m) => [
            <a href={`${ctx.base}/messages/${encodeURIComponent(m.id)}`} data-testid="message-link">
              <When at={m.time} />
            </a>,
            m.pipeline,
            <span>
              {m.method} <code>{m.path}</code>
              <br />
              <span class="muted">{m.endpoint} ({m.protocol})</span>
              {m.replay_of && (
                <span class="muted">
                  <br />
                  {m.edited ? "edited resend" : "replay"} by {m.actor ?? "?"}
                </span>
              )}
            </span>,
            <span>
              <StatusCode status={m.status} />
              {m.error_code && <span class="muted">{m.error_code}</span>}
            </span>,
            m.duration_ms.toFixed(1),
            m.backends.map((b) => `${b.name} ${b.status ?? b.outcome}`).join(", ") || "—",
            identifiers(m.metadata),
          ])}
        />
        <nav class="row pager" aria-label="Pages of messages">
          {search.cursor && <a href={`${ctx.base}/messages?${searchQuery(search)}`}>Newest</a>}
          {nextCursor && (
            <a href={`${ctx.base}/messages?${searchQuery(search, nextCursor)}`} data-testid="older">
              Older
            </a>
          )}
        </nav>
      </div>
    </Layout>
  );
}

/** The identifying metadata worth a column (the first few). */
function identifiers(metadata: Record<string, string>): string {
  const keys = [
    "patient_id",
    "dicom_patient_id",
    "accession",
    "dicom_study_uid",
    "hl7.control_id",
    "fhir.resource_type",
    "fhir.id",
    "delivery_id",
  ];
  return keys.filter((k) => metadata[k]).slice(0, 3).map((k) => `${k}=${metadata[k]}`).join(
    ", ",
  ) || "—";
}

/** A body as the pages show it: JSON and XML indented, DICOM as a tag table, binary as hex. */
export function BodyView(
  { view: v, size, truncated }: { view: ContentView; size: number; truncated: boolean },
) {
  const sized = `${size} bytes${truncated ? " (only the first part was kept)" : ""}`;
  if (v.kind === "empty") return <p class="muted">No body.</p>;
  if (v.kind === "json") return <pre data-kind="json">{prettyJson(v.text ?? "")}</pre>;
  if (v.kind === "xml") return <pre data-kind="xml">{prettyXml(v.text ?? "")}</pre>;
  if (v.kind === "text") return <pre data-kind="text">{v.text ?? ""}</pre>;
  if (v.kind === "dicom") {
    return (
      <div>
        <p class="muted">DICOM, {sized}</p>
        <Table
          caption="DICOM elements"
          testId="dicom-tags"
          head={["Tag", "Keyword", "VR", "Value"]}
          empty="No element."
          rows={(v.tags ?? []).map((t) => [<code>{t.tag}</code>, t.keyword, t.vr, t.value])}
        />
      </div>
    );
  }
  return (
    <div>
      <p class="muted">Binary, {sized}; the first bytes as hex:</p>
      <pre data-kind="hex">{v.hex ?? ""}</pre>
    </div>
  );
}

/** One stage's body. */
function StageBody({ stage }: { stage: StageContent }) {
  return <BodyView view={stage.view} size={stage.size} truncated={stage.truncated} />;
}

const STAGE_TITLES: Record<string, string> = {
  received: "As received",
  after_middleware: "After the middleware",
  backend_request: "Sent to",
  backend_response: "Answer of",
};

/** One tracked message: metadata, backends, and (asked for) its stages side by side. */
export function MessagePage(
  { ctx, message, withContent, canOperate, backends, outcome }: {
    ctx: PageContext;
    message: TrackedMessageDetail;
    withContent: boolean;
    canOperate: boolean;
    /** The backends of its pipeline (replay to one of them). */
    backends: string[];
    outcome?: ReplayOutcome;
  },
) {
  const href = `${ctx.base}/messages/${encodeURIComponent(message.id)}`;
  return (
    <Layout title={`Message ${message.id}`} ctx={ctx} active="/messages">
      <h1>Message</h1>
      <p>
        <a href={`${ctx.base}/messages`}>All messages</a>
      </p>
      {outcome && <ReplayResult ctx={ctx} outcome={outcome} />}
      <div class="card">
        <dl class="fields" data-testid="message">
          {[
            ["Id", message.id],
            ["Request id", message.request_id],
            ["Time", message.time],
            ["Pipeline", message.pipeline],
            ["Endpoint", `${message.endpoint} (${message.protocol})`],
            ["Request", `${message.method} ${message.path}`],
            ["Status", `${message.status}${message.error_code ? ` ${message.error_code}` : ""}`],
            ["Duration", `${message.duration_ms.toFixed(1)} ms`],
            ...(message.replay_of
              ? [["Replay of", `${message.replay_of} by ${message.actor ?? "?"}`]]
              : []),
            ...Object.entries(message.metadata).map(([k, v]) => [k, v]),
          ].map(([k, v]) => (
            <div>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      </div>
      <h2>Backends</h2>
      <Table
        caption="Backends called"
        testId="message-backends"
        head={["Backend", "Status", "Outcome", "ms"]}
        empty="No backend was called."
        rows={message.backends.map((b) => [
          b.name,
          b.status === null ? "—" : <StatusCode status={b.status} />,
          b.outcome === "ok"
            ? <Badge kind="ok" text="ok" />
            : <Badge kind="bad" text={b.outcome} />,
          b.duration_ms.toFixed(1),
        ])}
      />
      <h2>Stages</h2>
      {message.stages.length === 0
        ? <p class="muted">Its pipeline keeps metadata only (no content).</p>
        : !withContent
        ? (
          canOperate
            ? (
              <p>
                Kept: {message.stages.join(", ")}.{" "}
                <a href={`${href}?content=1`} data-testid="show-content">
                  Show the content
                </a>{" "}
                <span class="muted">(each view is written to the audit trail)</span>
              </p>
            )
            : (
              <p class="muted">
                Kept: {message.stages.join(", ")}. Viewing content needs the operator role.
              </p>
            )
        )
        : message.content_error
        ? <Flash kind="error" message={`The content cannot be read: ${message.content_error}`} />
        : (
          <div class="stages" data-testid="stages">
            {(message.content ?? []).map((s) => (
              <section aria-label={`${STAGE_TITLES[s.stage] ?? s.stage} ${s.backend ?? ""}`}>
                <h3>
                  {STAGE_TITLES[s.stage] ?? s.stage} {s.backend && <code>{s.backend}</code>}
                </h3>
                <p class="muted">
                  {s.method ? `${s.method} ${s.path ?? ""}${s.query ?? ""} ` : ""}
                  {s.status !== undefined ? `status ${s.status} ` : ""}
                  {s.content_type ?? "no content type"}, {s.size} bytes
                </p>
                <details>
                  <summary>Headers ({Object.keys(s.headers).length})</summary>
                  <pre>{Object.entries(s.headers).map(([k, v]) => `${k}: ${v}`).join("\n")}</pre>
                </details>
                <StageBody stage={s} />
              </section>
            ))}
          </div>
        )}
      {canOperate && (
        <section aria-labelledby="replay-heading">
          <h2 id="replay-heading">Replay</h2>
          <form method="post" action={`${href}/replay`} class="row card">
            <Csrf token={ctx.session!.csrf} />
            <div>
              <label for="replay-backend">Send to</label>
              <select id="replay-backend" name="backend">
                <option value="">The pipeline (every backend it calls)</option>
                {backends.map((b) => <option value={b}>only {b}</option>)}
              </select>
            </div>
            <div>
              <button type="submit" data-testid="replay">Replay now</button>
            </div>
          </form>
          {message.stages.includes("received") && (
            <p>
              <a href={`${href}/edit`} data-testid="edit">Edit and resend…</a>
            </p>
          )}
        </section>
      )}
    </Layout>
  );
}

/** What a replay or resend did. */
function ReplayResult({ ctx, outcome }: { ctx: PageContext; outcome: ReplayOutcome }) {
  return (
    <div
      class={`flash ${outcome.status < 400 ? "flash-ok" : "flash-error"}`}
      role="status"
      data-testid="replay-outcome"
    >
      <p>
        Sent again: the pipeline answered <strong>{outcome.status}</strong>
        {outcome.error_code ? ` (${outcome.error_code})` : ""}; request id{" "}
        <code>{outcome.request_id}</code>
        {outcome.backends.length ? `, backends ${outcome.backends.join(", ")}` : ""}.{" "}
        <a href={`${ctx.base}/messages`}>See it in the messages</a>
      </p>
      {outcome.body_preview && <pre>{outcome.body_preview.slice(0, 4096)}</pre>}
    </div>
  );
}

/** The edit-and-resend form, with the body as received. */
export function EditPage(
  { ctx, message, body, contentType, backends }: {
    ctx: PageContext;
    message: TrackedMessage;
    body: string;
    contentType: string;
    backends: string[];
  },
) {
  const href = `${ctx.base}/messages/${encodeURIComponent(message.id)}`;
  return (
    <Layout title={`Edit and resend ${message.id}`} ctx={ctx} active="/messages">
      <h1>Edit and resend</h1>
      <p>
        <a href={href}>Back to the message</a>
      </p>
      <p class="muted">
        The edited message goes through pipeline <strong>{message.pipeline}</strong>{" "}
        as a new request. Who resent it, and a hash of the edit, are written to the audit trail.
      </p>
      <form method="post" action={`${href}/resend`} class="card">
        <Csrf token={ctx.session!.csrf} />
        <label for="resend-body">Body</label>
        <textarea id="resend-body" name="body" rows={18} spellcheck={false}>{body}</textarea>
        <div class="row">
          <div>
            <label for="resend-type">Content type</label>
            <input id="resend-type" name="content_type" type="text" value={contentType} />
          </div>
          <div>
            <label for="resend-backend">Send to</label>
            <select id="resend-backend" name="backend">
              <option value="">The pipeline (every backend it calls)</option>
              {backends.map((b) => <option value={b}>only {b}</option>)}
            </select>
          </div>
          <div>
            <button type="submit" data-testid="resend">Resend</button>
          </div>
        </div>
      </form>
    </Layout>
  );
}
