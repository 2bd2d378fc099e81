/**
 * The preview worker (a module Worker): says it is ready once loaded, then runs one preview per
 * message and answers with its outcome. The pool (pool.ts) terminates it when a preview passes
 * its deadline, so nothing here needs to watch the time.
 */
/// <reference lib="deno.worker" />
import { type PreviewOutcome, runPreview } from "./run.ts";

/** A preview to run. */
export interface PreviewJob {
  spec: unknown;
  input: unknown;
}

/** The worker's messages: ready once, then one answer per job, in order. */
export type PreviewReply =
  | { ready: true }
  | { outcome: PreviewOutcome }
  | { failure: string };

self.onmessage = (e: MessageEvent<PreviewJob>) => {
  let reply: PreviewReply;
  try {
    reply = { outcome: runPreview(e.data.spec, e.data.input) };
  } catch (err) {
    // Not JOLT's own error (a bug, a stack overflow on a deep sample): the service logs it.
    reply = { failure: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  try {
    self.postMessage(reply);
  } catch (err) {
    self.postMessage({ failure: `the output cannot be sent back: ${(err as Error).message}` });
  }
};

self.postMessage({ ready: true } satisfies PreviewReply);
