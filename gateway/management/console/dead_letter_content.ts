/**
 * A dead letter's body for the console (operators only; each view is audited by the caller): the
 * queued message's file read back (checked), its body up to {@link MAX_DEAD_LETTER_BODY} bytes,
 * and the view message tracking gives bodies (JSON, XML, text, DICOM tags, hex).
 */
import { join } from "node:path";
import { readMessage } from "../../delivery/mod.ts";
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
}

/**
 * Reads dead letter `id` of a file queue whose directory is `queue.dir` (the id was checked by
 * `inspect` before). A queue kept elsewhere (`nats:<stream>`) has no file to read: an error says so.
 */
export async function deadLetterBody(queue: { dir: string }, id: string): Promise<DeadLetterBody> {
  if (/^[a-z]+:/.test(queue.dir) && !queue.dir.startsWith("/")) {
    throw new Error(`the body of a dead letter kept in ${queue.dir} is not shown here`);
  }
  const path = join(queue.dir, "dead", `${id}.msg`);
  const stored = await readMessage(path);
  const length = Math.min(stored.bodyLength, MAX_DEAD_LETTER_BODY);
  const bytes = new Uint8Array(length);
  {
    using file = await Deno.open(path, { read: true });
    await file.seek(stored.bodyOffset, Deno.SeekMode.Start);
    let at = 0;
    while (at < length) {
      const n = await file.read(bytes.subarray(at));
      if (n === null) break;
      at += n;
    }
  }
  return {
    content_type: stored.header.content_type,
    size: stored.bodyLength,
    truncated: stored.bodyLength > length,
    headers: stored.header.headers,
    pipeline: stored.header.pipeline,
    view: viewOf(bytes, stored.header.content_type),
  };
}
