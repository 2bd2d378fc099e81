/**
 * A backend's answer streamed to the client, watched for breaking off: once its head is sent, a
 * failure of the stream can no longer be an error answer, so it is logged and counted here with
 * the request's id and its own code (502 `upstream_body_failed`, 504 `backend_timeout`, 502
 * `upstream_response_too_large`) and the client's connection is cut, as a proxy must, so that
 * the client sees a truncated answer rather than a short one.
 *
 * @module
 */
import { upstreamBodyFailed } from "../envelope.ts";
import { clientClosed, GatewayError, markRecorded } from "../errors.ts";

/** Logs and counts a failure with the request's id (RequestRecord.lateFailure). */
export type LateFailure = (
  g: GatewayError,
  fields: Record<string, unknown>,
  options: { message: string },
) => void;

/**
 * What a streamed answer of `backend` fails with once it broke off after `sent` bytes: the
 * failure is logged and counted with `report`, then thrown on marked as recorded.
 */
export function answerFailure(
  report: LateFailure,
  backend: string,
): (err: unknown, sent: number) => GatewayError {
  return (err, sent) => {
    const g = answerBroke(err, backend, sent);
    report(g, { backend }, { message: "the answer broke off after its head was sent" });
    return markRecorded(g);
  };
}

/**
 * `body` as a stream that reports its own failure with `report` (for a connection the guard does
 * not track; a tracked one reports through ClientConnection.track): pull-based, so it reads
 * nothing ahead, and the source is locked only when the first chunk is asked for.
 */
export function watchedAnswer(
  body: ReadableStream<Uint8Array>,
  report: LateFailure,
  backend: string,
): ReadableStream<Uint8Array> {
  const failed = answerFailure(report, backend);
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      reader ??= body.getReader();
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw failed(err, sent);
      }
      if (chunk.done) return controller.close();
      sent += chunk.value.byteLength;
      controller.enqueue(chunk.value);
    },
    cancel: (reason) => (reader ?? body).cancel(reason),
  }, { highWaterMark: 0 });
}

/** What a failure of a streamed answer after `sent` bytes is. */
export function answerBroke(err: unknown, backend: string, sent: number): GatewayError {
  if (err instanceof GatewayError) return err;
  const name = (err as Error)?.name;
  // The backend's deadline covers its whole answer (pipeline/executor.ts).
  if (name === "TimeoutError") {
    return new GatewayError(
      504,
      "backend_timeout",
      `backend ${backend} did not finish its answer within its timeout_secs`,
      undefined,
      undefined,
      { cause: err },
    );
  }
  // The client left, and the backend call with it.
  if (name === "AbortError") return clientClosed(err);
  return upstreamBodyFailed(backend, sent, err);
}
