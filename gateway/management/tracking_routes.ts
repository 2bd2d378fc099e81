/**
 * Message tracking in the management API (docs/management-api.md, "Message tracking"): the
 * store's state, search, one message (metadata for viewers; content for operators, audited),
 * replay and edit-and-resend (operators, audited), and a dead letter's content and its
 * edit-and-resend (operators, audited; retried as it is with `POST /{prefix}/queues/{backend}/retry`).
 */
import type { Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { type TrackingActor, type TrackingQuery, viewOf } from "../tracking/mod.ts";
import type { GatewayControl } from "./control.ts";
import type { ManagementEnv } from "./request_context.ts";
import { fail } from "./responses.ts";
import { callerOf, requireRole } from "./roles.ts";
import { PREFIXED } from "./routing.ts";

/** Largest edited body a resend takes (bytes, before base64). */
export const MAX_RESEND_BYTES = 64 * 1024 * 1024;

/** Query parameters of a search that are not metadata fields. */
const SEARCH_PARAMS = new Set(["from", "to", "pipeline", "endpoint", "status", "cursor", "limit"]);

/** True for the path of a resend (its body may exceed the API's usual limit). */
export function isResendPath(path: string): boolean {
  return /\/(tracking|queues\/[^/]+)\/messages\/[^/]+\/resend$/.test(path);
}

/** The actor of a management request. */
function actorOf(c: Context<ManagementEnv>): TrackingActor {
  const caller = callerOf(c) ?? { name: "unknown", role: "viewer" };
  return { name: caller.name, role: caller.role, request_id: c.get("requestId") };
}

/** Adds the `/{prefix}/tracking` routes and a dead letter's content. */
export function trackingRoutes(app: Hono<ManagementEnv>, control: GatewayControl): void {
  const notTracked = (c: Context<ManagementEnv>) =>
    fail(c, 404, "tracking_disabled", "message tracking is not available in this gateway");

  app.get(`${PREFIXED}/tracking`, (c) => {
    if (!control.tracking) return notTracked(c);
    return c.json(control.tracking.status());
  });

  app.get(`${PREFIXED}/tracking/messages`, (c) => {
    if (!control.tracking) return notTracked(c);
    const q = c.req.query();
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(q)) {
      if (SEARCH_PARAMS.has(k)) continue;
      fields[k.startsWith("field.") ? k.slice(6) : k] = v;
    }
    if (Object.keys(fields).length > 16) {
      return fail(c, 400, "invalid_query", "at most 16 metadata fields in one search");
    }
    const limit = q.limit === undefined ? undefined : Number(q.limit);
    const query: TrackingQuery = {
      ...(q.from ? { from: q.from } : {}),
      ...(q.to ? { to: q.to } : {}),
      ...(q.pipeline ? { pipeline: q.pipeline } : {}),
      ...(q.endpoint ? { endpoint: q.endpoint } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...(q.cursor ? { cursor: q.cursor } : {}),
      ...(limit !== undefined ? { limit } : {}),
      fields,
    };
    return c.json(control.tracking.search(query));
  });

  app.get(`${PREFIXED}/tracking/messages/:id`, async (c) => {
    if (!control.tracking) return notTracked(c);
    const withContent = ["1", "true", "yes"].includes(c.req.query("content") ?? "");
    if (withContent) {
      const refused = requireRole(c, "operator");
      if (refused) return refused;
    }
    const id = c.req.param("id");
    const message = await control.tracking.get(id, { withContent, actor: actorOf(c) });
    if (!message) return fail(c, 404, "message_not_found", `no tracked message ${id}`);
    return c.json(message);
  });

  app.post(`${PREFIXED}/tracking/messages/:id/replay`, async (c) => {
    if (!control.tracking) return notTracked(c);
    const body = await jsonBody(c);
    if (body instanceof Response) return body;
    const backend = body.backend;
    if (backend !== undefined && typeof backend !== "string") {
      return fail(c, 400, "invalid_request", "backend is a string (a backend of the pipeline)");
    }
    const outcome = await control.tracking.replay(c.req.param("id"), { backend }, actorOf(c));
    return c.json(outcome);
  });

  app.post(
    `${PREFIXED}/tracking/messages/:id/resend`,
    resendLimit,
    async (c) => {
      if (!control.tracking) return notTracked(c);
      const body = await jsonBody(c);
      if (body instanceof Response) return body;
      const { backend } = body;
      if (backend !== undefined && typeof backend !== "string") {
        return fail(c, 400, "invalid_request", "backend is a string (a backend of the pipeline)");
      }
      const edit = editOf(c, body);
      if (edit instanceof Response) return edit;
      const outcome = await control.tracking.replay(
        c.req.param("id"),
        { ...(backend ? { backend } : {}), ...edit },
        actorOf(c),
      );
      return c.json(outcome);
    },
  );

  // A dead letter's content (its stored request and body, as the backend would get it).
  app.get(`${PREFIXED}/queues/:backend/messages/:id/content`, async (c) => {
    const refused = requireRole(c, "operator");
    if (refused) return refused;
    const backend = c.req.param("backend");
    const id = c.req.param("id");
    const q = control.queues?.get(backend);
    if (!q) return fail(c, 404, "queue_not_found", `backend ${backend} has no delivery queue`);
    // deadContent checks the id (it becomes a file name or a subject).
    const content = await q.deadContent(id, MAX_DEAD_LETTER_VIEW);
    const info = await q.inspect(id, "dead");
    const h = content.header;
    await control.tracking?.recordAct("queue.dead_letter_viewed", actorOf(c), id, {
      backend,
      pipeline: h.pipeline,
    });
    return c.json({
      ...info,
      query: h.query,
      headers: Object.fromEntries(h.headers),
      metadata: h.metadata,
      size: content.size,
      truncated: content.truncated,
      body_base64: Buffer.from(content.body).toString("base64"),
      view: await viewOf(content.body, h.content_type),
    });
  });

  // A dead letter sent again with an edited body (a new message; the dead letter goes).
  app.post(
    `${PREFIXED}/queues/:backend/messages/:id/resend`,
    resendLimit,
    async (c) => {
      const refused = requireRole(c, "operator");
      if (refused) return refused;
      const backend = c.req.param("backend");
      const id = c.req.param("id");
      const q = control.queues?.get(backend);
      if (!q) return fail(c, 404, "queue_not_found", `backend ${backend} has no delivery queue`);
      const body = await jsonBody(c);
      if (body instanceof Response) return body;
      const edit = editOf(c, body);
      if (edit instanceof Response) return edit;
      const newId = await q.resendDead(id, edit);
      // Who, which dead letter, its new delivery id and the edit's hash; never the content.
      await control.tracking?.recordAct("queue.dead_letter_resent", actorOf(c), id, {
        backend,
        new_delivery_id: newId,
        edited_sha256: createHash("sha256").update(edit.body).digest("hex"),
        edited_bytes: edit.body.byteLength,
      });
      return c.json({ resent: id, delivery_id: newId, backend });
    },
  );
}

/** Largest body of a dead letter the content route gives (bytes; `truncated` past it). */
const MAX_DEAD_LETTER_VIEW = 4 * 1024 * 1024;

/** The size limit of a resend's JSON (the edited body in base64, and a little more). */
const resendLimit = bodyLimit({
  maxSize: Math.ceil(MAX_RESEND_BYTES * 4 / 3) + 4096,
  onError: (c) =>
    fail(c, 413, "payload_too_large", `an edited body is at most ${MAX_RESEND_BYTES} bytes`),
});

/**
 * The edit of a resend's JSON: `body` (text) or `body_base64` (bytes), one of them, and an
 * optional `content_type`; or the 400/413 to answer.
 */
function editOf(
  c: Context<ManagementEnv>,
  body: Record<string, unknown>,
): { body: Uint8Array; content_type?: string } | Response {
  const { content_type } = body;
  if (
    content_type !== undefined &&
    (typeof content_type !== "string" || content_type.length > 200 ||
      !/^[\x20-\x7e]*$/.test(content_type))
  ) {
    return fail(
      c,
      400,
      "invalid_request",
      "content_type is a string of printable ASCII (at most 200 characters)",
    );
  }
  let bytes: Uint8Array;
  if (typeof body.body === "string" && body.body_base64 === undefined) {
    bytes = new TextEncoder().encode(body.body);
  } else if (typeof body.body_base64 === "string" && body.body === undefined) {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body.body_base64.replace(/\s/g, ""))) {
      return fail(c, 400, "invalid_request", "body_base64 is not base64");
    }
    bytes = new Uint8Array(Buffer.from(body.body_base64, "base64"));
  } else {
    return fail(
      c,
      400,
      "invalid_request",
      "a resend needs the edited body: `body` (text) or `body_base64` (bytes), one of them",
    );
  }
  if (bytes.byteLength > MAX_RESEND_BYTES) {
    return fail(c, 413, "payload_too_large", `an edited body is at most ${MAX_RESEND_BYTES} bytes`);
  }
  return { body: bytes, ...(content_type ? { content_type: content_type as string } : {}) };
}

/** The request's JSON object (an empty body is `{}`), or the 400 to answer. */
async function jsonBody(c: Context<ManagementEnv>): Promise<Record<string, unknown> | Response> {
  const text = await c.req.text();
  if (text.trim() === "") return {};
  try {
    const v = JSON.parse(text);
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  return fail(c, 400, "invalid_json", "the body is a JSON object");
}
