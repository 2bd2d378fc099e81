/**
 * JOLT previews for the REST API, the MCP tools and the web UI: run in a pool of module Workers
 * with a deadline, so that a spec that does too much work on its sample stops there and never
 * holds the service's event loop (which answers every team). `deno compile` of the service must
 * `--include cloud/preview/worker.ts` (deploy/release/compile.ts does).
 *
 * @example
 * ```ts
 * import { PreviewPool } from "./mod.ts";
 *
 * const pool = new PreviewPool({ deadlineMs: 1_000 });
 * const outcome = await pool.run([{ operation: "shift", spec: { a: "b" } }], { a: 1 });
 * pool.close();
 * if (outcome.kind !== "output" || JSON.stringify(outcome.output) !== '{"b":1}') {
 *   throw new Error("preview");
 * }
 * ```
 *
 * @module
 */
export { type PreviewLimitCode, PreviewLimitError } from "./errors.ts";
export {
  IDLE_MS,
  MAX_WAITING,
  PREVIEW_DEADLINE_MS,
  PreviewPool,
  type PreviewPoolOptions,
} from "./pool.ts";
export { type PreviewOutcome, type PreviewProblem, runPreview } from "./run.ts";
