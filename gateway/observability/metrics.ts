/**
 * Prometheus metrics of the gateway.
 *
 * CONTRACT (called by the executor and runtime; implemented fully by the management work):
 */

/** Metrics recorded by the data plane and rendered as Prometheus text by `GET /metrics`. */
export interface Metrics {
  /** A request entered a pipeline (in-flight gauge +1). */
  requestStarted(pipeline: string): void;
  /** A request left a pipeline (in-flight -1; counter and latency histogram by status). */
  requestFinished(pipeline: string, status: number, seconds: number): void;
  /** One backend call finished; `outcome` is `ok` or the error code. */
  backendCall(pipeline: string, backend: string, outcome: string, seconds: number): void;
  /** An error response was produced with this code. */
  errorCode(code: string): void;
  /** A configuration reload finished. */
  reload(ok: boolean): void;
  /** Prometheus text exposition format 0.0.4. */
  render(): string;
}
