/** @jsxImportSource hono/jsx */
// Rendered once on the server (no client-side reconciliation): list items need no keys.
// deno-lint-ignore-file jsx-key
/**
 * Dead letters of the delivery queues: listed (by backend, paged), viewed one by one (what the
 * request was, its attempts, why it is dead and the backend's last answer; the body for operators,
 * audited), retried, one or all of a backend, and a text body edited and sent again, by an operator.
 */
import type { DeadLetterBody } from "./dead_letter_content.ts";
import { Csrf, Flash, Layout, type PageContext, Table, When } from "./layout.tsx";
import { BodyView } from "./messages.tsx";

/** One dead letter as the queue describes it (`DeliveryQueue.inspect`). */
export type DeadLetter = Record<string, unknown>;

/** Dead letters shown per page. */
export const PAGE_SIZE = 50;

const str = (v: unknown): string => (v === undefined || v === null ? "" : String(v));

function deadReason(m: DeadLetter): string {
  const dead = m.dead as { reason?: unknown } | undefined;
  return str(dead?.reason ?? m.last_error);
}

/** The list page. */
export function DeadLettersPage(
  { ctx, backends, backend, letters, page, total, notice, resent, canRetry }: {
    ctx: PageContext;
    /** Queued backends and their dead-letter counts. */
    backends: { name: string; dead: number }[];
    /** The backend shown ("" for all). */
    backend: string;
    letters: { backend: string; message: DeadLetter }[];
    page: number;
    total: number;
    notice?: string;
    /** A dead letter just sent again edited, and its new delivery id. */
    resent?: { from: string; id: string };
    canRetry: boolean;
  },
) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const link = (p: number) =>
    `${ctx.base}/dead-letters?${new URLSearchParams({ backend, page: String(p) })}`;
  return (
    <Layout title="Dead letters" ctx={ctx} active="/dead-letters">
      <h1>Dead letters</h1>
      <Flash kind="ok" message={notice} />
      {resent && (
        <p class="flash flash-ok" role="status" data-testid="dead-letter-resent">
          Dead letter <code>{resent.from}</code> was sent again as delivery{" "}
          <code data-testid="new-delivery-id">{resent.id}</code>.
        </p>
      )}
      <form method="get" action={`${ctx.base}/dead-letters`} class="row card">
        <div>
          <label for="dl-backend">Backend</label>
          <select id="dl-backend" name="backend">
            <option value="">All queued backends</option>
            {backends.map((b) => (
              <option value={b.name} selected={b.name === backend}>
                {b.name} ({b.dead})
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit" class="secondary">Show</button>
        </div>
      </form>
      {backend && canRetry && letters.length > 0 && (
        <form
          method="post"
          action={`${ctx.base}/dead-letters/${encodeURIComponent(backend)}/retry`}
          class="row"
        >
          <Csrf token={ctx.session!.csrf} />
          <button type="submit" class="secondary" data-testid="retry-all">
            Retry every dead letter of {backend}
          </button>
        </form>
      )}
      <Table
        caption="Dead letters"
        testId="dead-letters"
        head={["Delivery id", "Backend", "Accepted", "Request", "Attempts", "Why", ""]}
        empty={backends.length
          ? "No dead letter: every queued message was delivered or is still being tried."
          : "No backend has a delivery queue ([backends.<name>.queue])."}
        rows={letters.map(({ backend: b, message: m }) => [
          <a
            href={`${ctx.base}/dead-letters/${encodeURIComponent(b)}/${
              encodeURIComponent(str(m.id))
            }`}
            data-testid="dead-letter-link"
          >
            <code>{str(m.id)}</code>
          </a>,
          b,
          <When at={str(m.accepted_at) || null} />,
          <span>
            {str(m.method)} <code>{str(m.path)}</code>
            <br />
            <span class="muted">pipeline {str(m.pipeline)}</span>
          </span>,
          str(m.attempts),
          deadReason(m),
          canRetry
            ? (
              <form
                method="post"
                action={`${ctx.base}/dead-letters/${encodeURIComponent(b)}/${
                  encodeURIComponent(str(m.id))
                }/retry`}
              >
                <Csrf token={ctx.session!.csrf} />
                <button
                  type="submit"
                  class="small"
                  aria-label={`Retry dead letter ${str(m.id)}`}
                >
                  Retry
                </button>
              </form>
            )
            : "",
        ])}
      />
      {pages > 1 && (
        <nav class="row pager" aria-label="Pages of dead letters">
          {page > 1 && <a href={link(page - 1)}>Previous</a>}
          <span>Page {page} of {pages} ({total} dead letters)</span>
          {page < pages && <a href={link(page + 1)}>Next</a>}
        </nav>
      )}
    </Layout>
  );
}

/** One dead letter. */
export function DeadLetterPage(
  { ctx, backend, message, canRetry, trackedHref, canView, content, contentError }: {
    ctx: PageContext;
    backend: string;
    message: DeadLetter;
    canRetry: boolean;
    /** May see the body (operators). */
    canView: boolean;
    /** The body, when asked for. */
    content?: DeadLetterBody;
    /** Why the body asked for is not shown. */
    contentError?: string;
    /** The tracked message of this delivery, when tracking kept it. */
    trackedHref?: string;
  },
) {
  // The queue's dead-letter note (gateway/delivery): why, when, the answer's status and body.
  const dead = (message.dead ?? {}) as {
    reason?: string;
    dead_at?: string;
    status?: number;
    answer?: string;
    attempts?: number;
  };
  const rows: [string, unknown][] = [
    ["Delivery id", message.id],
    ["Backend", backend],
    ["Pipeline", message.pipeline],
    ["Endpoint", message.endpoint],
    ["Request", `${str(message.method)} ${str(message.path)}`],
    ["Content type", message.content_type ?? "—"],
    ["Body", `${str(message.body_bytes)} bytes`],
    ["Accepted", message.accepted_at],
    ["Attempts", message.attempts],
    ["Dead since", dead.dead_at ?? "—"],
    ["Why", deadReason(message)],
    ["Backend's last answer", dead.status ?? "—"],
  ];
  return (
    <Layout title={`Dead letter ${str(message.id)}`} ctx={ctx} active="/dead-letters">
      <h1>Dead letter</h1>
      <p>
        <a href={`${ctx.base}/dead-letters?backend=${encodeURIComponent(backend)}`}>
          All dead letters of {backend}
        </a>
      </p>
      <div class="card">
        <dl class="fields" data-testid="dead-letter">
          {rows.map(([k, v]) => (
            <div>
              <dt>{k}</dt>
              <dd>{str(v)}</dd>
            </div>
          ))}
        </dl>
      </div>
      {dead.answer && (
        <section>
          <h2>The backend's answer</h2>
          <pre data-testid="dead-answer">{dead.answer.slice(0, 4096)}</pre>
        </section>
      )}
      <h2>The message</h2>
      <Flash kind="error" message={contentError} />
      {content
        ? (
          <section data-testid="dead-letter-content">
            <p class="muted">
              {content.content_type ?? "no content type"}, {content.size} bytes
            </p>
            <details>
              <summary>Headers ({content.headers.length})</summary>
              <pre>{content.headers.map(([k, v]) => `${k}: ${v}`).join("\n")}</pre>
            </details>
            <BodyView view={content.view} size={content.size} truncated={content.truncated} />
          </section>
        )
        : canView
        ? (
          <p>
            <a
              href={`${ctx.base}/dead-letters/${encodeURIComponent(backend)}/${
                encodeURIComponent(str(message.id))
              }?content=1`}
              data-testid="show-dead-content"
            >
              Show the content
            </a>{" "}
            <span class="muted">
              (each view is written to the audit trail; a text body can then be edited and resent)
            </span>
          </p>
        )
        : <p class="muted">Viewing content needs the operator role.</p>}
      {trackedHref && (
        <p>
          <a href={trackedHref}>The message with its stages</a>
        </p>
      )}
      {canRetry && content?.editable !== undefined && (
        <ResendForm
          ctx={ctx}
          backend={backend}
          id={str(message.id)}
          body={content.editable}
          contentType={content.content_type ?? ""}
        />
      )}
      {canRetry && content && content.editable === undefined && (
        <p class="muted" data-testid="not-editable">
          {content.truncated
            ? "Only the first part of this body is shown: it is resent edited through the API."
            : "A binary or DICOM body is resent edited through the API (body_base64) or gwcli."}
        </p>
      )}
      {canRetry && (
        <form
          method="post"
          action={`${ctx.base}/dead-letters/${encodeURIComponent(backend)}/${
            encodeURIComponent(str(message.id))
          }/retry`}
        >
          <Csrf token={ctx.session!.csrf} />
          <p>
            <button type="submit" data-testid="retry">Retry delivery</button>
          </p>
          <p class="muted">
            The message goes back to the queue of {backend} and is delivered with the usual retries.
          </p>
        </form>
      )}
    </Layout>
  );
}

/** The line endings of `text`: what an edit in a form (always CRLF) is given back. */
export function lineEndingsOf(text: string): "cr" | "lf" | "crlf" {
  if (text.includes("\r\n")) return "crlf";
  if (text.includes("\r")) return "cr";
  return "lf";
}

/** `text` from a form's textarea (CRLF, or LF) with the line endings `eol` of the original. */
export function withLineEndings(text: string, eol: string | null): string {
  const lf = text.replace(/\r\n?/g, "\n");
  if (eol === "cr") return lf.replace(/\n/g, "\r");
  if (eol === "crlf") return lf.replace(/\n/g, "\r\n");
  return lf;
}

/** An operator's form to fix a dead letter's text body and send it again as a new message. */
function ResendForm(
  { ctx, backend, id, body, contentType }: {
    ctx: PageContext;
    backend: string;
    id: string;
    body: string;
    contentType: string;
  },
) {
  return (
    <section>
      <h2>Edit and resend</h2>
      <p class="muted">
        The edited message goes to the queue of {backend}{" "}
        as a new message, and this dead letter is removed. Who resent it, and a hash of the edit,
        are written to the audit trail.
      </p>
      <form
        method="post"
        action={`${ctx.base}/dead-letters/${encodeURIComponent(backend)}/${
          encodeURIComponent(id)
        }/resend`}
        class="card"
        data-testid="dead-letter-resend"
      >
        <Csrf token={ctx.session!.csrf} />
        <input type="hidden" name="eol" value={lineEndingsOf(body)} />
        <label for="dl-resend-body">Body</label>
        <textarea id="dl-resend-body" name="body" rows={18} spellcheck={false}>{body}</textarea>
        <div class="row">
          <div>
            <label for="dl-resend-type">Content type</label>
            <input id="dl-resend-type" name="content_type" type="text" value={contentType} />
          </div>
          <div>
            <button type="submit" data-testid="dead-letter-resend-submit">Resend edited</button>
          </div>
        </div>
      </form>
    </section>
  );
}
