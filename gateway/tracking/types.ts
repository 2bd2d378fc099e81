/** The public shapes of message tracking: records, searches, content views and replays. */

/** A stage of a message whose content may be kept. */
export type TrackingStage =
  | "received"
  | "after_middleware"
  | "backend_request"
  | "backend_response";

/** One backend a tracked message was sent to. */
export interface TrackedBackendCall {
  /** `[backends.<name>]`. */
  name: string;
  /** The status it answered, or null when it gave no answer. */
  status: number | null;
  /** `ok`, or the error code of a failed call (`backend_timeout`, `backend_unavailable`…). */
  outcome: string;
  duration_ms: number;
}

/** A tracked message without its content: what searches list and viewers may see. */
export interface TrackedMessage {
  /** The record's id (sortable by time). */
  id: string;
  /** The request id (`X-Request-Id`; for DIMSE and HL7 the gateway's own). */
  request_id: string;
  /** When it arrived (ISO 8601). */
  time: string;
  pipeline: string;
  endpoint: string;
  /** `http`, `h3`, `dimse` or `mllp`. */
  protocol: string;
  /** HTTP method, DIMSE operation (`C-STORE`) or `MLLP`. */
  method: string;
  /** Path below the endpoint's prefix. */
  path: string;
  /** The status the pipeline answered (HTTP semantics; a DIMSE or HL7 answer is mapped from it). */
  status: number;
  /** The gateway's error code when the pipeline failed. */
  error_code?: string;
  duration_ms: number;
  backends: TrackedBackendCall[];
  /**
   * Identifying metadata: the request's metadata after the middleware (FHIR type/id, DICOM UIDs,
   * calling AE, `auth.subject`, `delivery_id`, HL7 type/trigger/control id…) and what the
   * gateway derived for search (`patient_id`, `accession`, `fhir.resource_type`, `fhir.id`…).
   */
  metadata: Record<string, string>;
  /** The stages whose content is kept (none: metadata only). */
  stages: string[];
  /** The message this one replays, and who asked for it. */
  replay_of?: string;
  /** The management token that replayed or resent it. */
  actor?: string;
  /** True when the resend carried an edited body. */
  edited?: boolean;
}

/** A DICOM element of a tag table. */
export interface DicomTagRow {
  /** `(0010,0010)`. */
  tag: string;
  /** Keyword from the data dictionary, when known. */
  keyword: string;
  vr: string;
  /** The value as text (cut at 256 characters; binary values give their size). */
  value: string;
}

/** How a client shows a stage's body. */
export interface ContentView {
  /** `json`, `xml` and `text` give `text`; `dicom` gives `tags`; `binary` gives `hex`. */
  kind: "empty" | "json" | "xml" | "text" | "dicom" | "binary";
  /** The body as text (JSON and XML as received; clients pretty-print them). */
  text?: string;
  /** A DICOM Part 10 body's elements (pixel data as its size). */
  tags?: DicomTagRow[];
  /** First 512 bytes as hex, for a binary body. */
  hex?: string;
}

/** The content of one stage, decrypted. */
export interface StageContent {
  stage: TrackingStage;
  /** For `backend_request` and `backend_response`: the backend. */
  backend?: string;
  method?: string;
  path?: string;
  /** `?a=1`, or empty. */
  query?: string;
  /** For responses. */
  status?: number;
  /** Headers (credentials such as `Authorization` and `Cookie` are never kept). */
  headers: Record<string, string>;
  content_type: string | null;
  /** Size of the body as it passed (bytes). */
  size: number;
  /** True when only the first `max_content_bytes` were kept. */
  truncated: boolean;
  /** The kept bytes, base64. */
  body_base64: string;
  view: ContentView;
}

/** A tracked message with its content (operators only). */
export interface TrackedMessageDetail extends TrackedMessage {
  /** Absent when no content is kept; `content_error` says why it could not be read. */
  content?: StageContent[];
  content_error?: string;
}

/** A search. Every criterion given must hold. */
export interface TrackingQuery {
  /** From this time (ISO 8601 or epoch milliseconds), inclusive. */
  from?: string | number;
  /** Until this time, exclusive. */
  to?: string | number;
  pipeline?: string;
  endpoint?: string;
  /** An exact status (`404`), a class (`4xx`, `5xx`), or `error` (400 and above). */
  status?: string;
  /**
   * Metadata values that must match exactly: any metadata key (`hl7.control_id`,
   * `dicom_study_uid`) or a search alias (`patient_id`, `accession`, `study_uid`, `series_uid`,
   * `sop_uid`, `control_id`, `calling_aet`, `subject`, `delivery_id`, `fhir_type`, `fhir_id`).
   */
  fields?: Record<string, string>;
  /** From a previous page's `next_cursor`. */
  cursor?: string;
  /** Page size (1-500; default 50). */
  limit?: number;
}

/** One page of a search, newest first. */
export interface TrackingPage {
  messages: TrackedMessage[];
  /** Give it as `cursor` for the next (older) page; null on the last. */
  next_cursor: string | null;
}

/** A replay or resend. */
export interface ReplayRequest {
  /** Only this backend of the pipeline (else every backend the pipeline would call). */
  backend?: string;
  /** A new body (edit and resend); else the body as received. */
  body?: Uint8Array;
  /** Content type of `body` (default: the received one). */
  content_type?: string;
}

/** What a replay did. */
export interface ReplayOutcome {
  /** The replayed message. */
  replay_of: string;
  /** The new request's id (and its tracked record's id, when its pipeline tracks). */
  request_id: string;
  /** The pipeline's answer. */
  status: number;
  /** The error code when the pipeline failed. */
  error_code?: string;
  /** The answer's content type and its first bytes as text (up to 4 KiB). */
  content_type?: string | null;
  body_preview?: string;
  /** Backends called. */
  backends: string[];
}

/** Who asks (for the audit trail). */
export interface TrackingActor {
  /** The management token's name. */
  name: string;
  role: string;
  /** The management request's id. */
  request_id?: string;
  /** The client's address, when known. */
  remote_addr?: string;
}

/** The store's state (`GET /{prefix}/tracking`). */
export interface TrackingStatus {
  enabled: boolean;
  /** The database file. */
  file: string | null;
  records: number;
  bytes: number;
  oldest: string | null;
  /** Records dropped since start (queue full, store broken) in this isolate. */
  dropped: number;
  /** Records written since start by this isolate. */
  written: number;
  /** Why the store is degraded, when it is. */
  degraded?: string;
  /** Pipelines that track, and the stages they keep. */
  pipelines: { name: string; content: string[] }[];
}

/**
 * The running gateway's tracking as the management API and the operations console use it.
 * Content views and replays are audited by the implementation (who, which message; never the
 * content).
 */
export interface TrackingControl {
  status(): TrackingStatus;
  search(query: TrackingQuery): TrackingPage;
  /** One message; `withContent` decrypts its stages (audited as a content view). */
  get(
    id: string,
    options: { withContent: boolean; actor: TrackingActor },
  ): Promise<TrackedMessageDetail | undefined>;
  /** Sends a tracked message through its pipeline again (audited). */
  replay(id: string, request: ReplayRequest, actor: TrackingActor): Promise<ReplayOutcome>;
  /**
   * Records an operator's act on a message in the audit trail and the log (never content):
   * used for acts outside the store, such as viewing a dead letter's content.
   */
  recordAct(
    event: OperatorAct,
    actor: TrackingActor,
    messageId: string,
    extra?: OperatorActDetail,
  ): Promise<void>;
}

/** The audited acts of operators. */
export type OperatorAct =
  | "tracking.content_viewed"
  | "tracking.replayed"
  | "tracking.resent"
  | "queue.dead_letter_viewed"
  | "queue.dead_letter_resent"
  | "management.refused";

/** What an operator's act record says besides who and which message (never content). */
export interface OperatorActDetail {
  backend?: string;
  pipeline?: string;
  /** A dead letter sent again: the new message's delivery id. */
  new_delivery_id?: string;
  /** An edited body: its SHA-256 (hex) and size. */
  edited_sha256?: string;
  edited_bytes?: number;
  /** A refused call (`management.refused`): its method, path, and the 403. */
  method?: string;
  path?: string;
  status?: number;
}
