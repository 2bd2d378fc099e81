/**
 * A dead letter's body for the console (operators only; each view is audited by the caller): the
 * stored request read back through its queue's store (the file store checks its file; NATS
 * JetStream gives the message and, for a large body, its object), its body up to
 * {@link MAX_DEAD_LETTER_BODY} bytes, and the view message tracking gives bodies (JSON, XML, text,
 * DICOM tags, hex).
 */
import type { QueueStore } from "../../delivery/mod.ts";
import { type ContentView, viewOf } from "../../tracking/mod.ts";

/** Most bytes of a dead letter's body read for the page. */
export const MAX_DEAD_LETTER_BODY = 1024 * 1024;

/** What the page shows of a dead letter's body. */
export interface DeadLetterBody {
  content_type: string | null;
  size: number;
  truncated: boolean;
  headers: [string, string][];
  pipeline: string;
  view: ContentView;
  /** The body as text when it may be edited in a form (text, JSON, XML; whole), else undefined. */
  editable?: string;
}

/** Reads dead letter `id` of `queue` (400 for what is not a delivery id, 404 for none). */
export async function deadLetterBody(
  queue: Pick<QueueStore, "deadContent">,
  id: string,
): Promise<DeadLetterBody> {
  const content = await queue.deadContent(id, MAX_DEAD_LETTER_BODY);
  const h = content.header;
  const view = await viewOf(content.body, h.content_type);
  const text = !content.truncated &&
    (view.kind === "text" || view.kind === "json" || view.kind === "xml" || view.kind === "empty");
  return {
    content_type: h.content_type,
    size: content.size,
    truncated: content.truncated,
    headers: h.headers,
    pipeline: h.pipeline,
    view,
    ...(text ? { editable: new TextDecoder().decode(content.body) } : {}),
  };
}
