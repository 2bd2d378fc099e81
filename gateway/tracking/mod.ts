/**
 * Message tracking (docs/operations.md, "Message tracking" and "Search and replay"): for each
 * request, DIMSE operation or HL7 message of a pipeline with `[pipelines.<name>.tracking]`, a
 * record (time, pipeline, endpoint, status, duration, backends and their status, identifying
 * metadata) and, when configured, each stage's content encrypted with age, kept in an SQLite
 * store (WAL) with retention by age and size. Records are queued and written in batches off the
 * request path; a full queue or a broken store drops them (counted, logged, degraded), never the
 * request.
 *
 * The faces: {@link TrackingRecorder} (one per isolate; the executor's `MessageTracker`),
 * {@link TrackingService} (the main thread's {@link TrackingControl}: search, view, replay,
 * resend, all audited) and {@link TrackingStore} (the database, for tools and tests).
 *
 * @example
 * ```ts
 * import { TrackingStore } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const store = new TrackingStore(dir);
 * store.insert([{
 *   id: "000000001-aa", time: Date.now(), request_id: "r1", pipeline: "adt", endpoint: "mllp_in",
 *   protocol: "mllp", method: "MLLP", path: "/", status: 200, duration_ms: 3, backends: [],
 *   metadata: { "hl7.control_id": "MSG0001", patient_id: "P123" }, stages: [],
 * }]);
 * const page = store.search({ fields: { control_id: "MSG0001" } });
 * console.log(page.messages.length, page.messages[0].metadata.patient_id); // 1 P123
 * store.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
export type {
  ContentView,
  DicomTagRow,
  OperatorAct,
  OperatorActDetail,
  ReplayOutcome,
  ReplayRequest,
  StageContent,
  TrackedBackendCall,
  TrackedMessage,
  TrackedMessageDetail,
  TrackingActor,
  TrackingControl,
  TrackingPage,
  TrackingQuery,
  TrackingStage,
  TrackingStatus,
} from "./types.ts";
export {
  MAX_QUEUED_CONTENT_BYTES,
  type RecorderDeps,
  TRACKING_COMPONENT,
  TrackingRecorder,
} from "./recorder.ts";
export { isolateRecorder } from "./isolate.ts";
export { TrackingService, type TrackingServiceDeps } from "./service.ts";
export { MAX_PAGE, recordId, STORE_FILE, type StoredRecord, TrackingStore } from "./store.ts";
export { REPLAY_SKIPPED_MIDDLEWARE, type ReplayRuntime } from "./replay.ts";
export { SEARCH_ALIASES } from "./fields.ts";
export { loadTrackingKey, type TrackingKey } from "./content.ts";
export { viewOf } from "./view.ts";
