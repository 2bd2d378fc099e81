/**
 * The tables of message tracking (docs/operations.md, "Message tracking") and of the management
 * API's role tokens: `[tracking]` (the store, its retention and its key), `[pipelines.<name>.tracking]`
 * (what one pipeline keeps) and `[management.tokens.<name>]` (a bearer token with a role).
 */
import { z } from "zod";
import { field, type TableSpec } from "../fields.ts";
import { int, positive, text } from "../values.ts";

/** The stages of a message whose content a pipeline may keep. */
export const TRACKING_STAGES = [
  "received",
  "after_middleware",
  "backend_request",
  "backend_response",
] as const;

/** The roles of a management token, weakest first. */
export const MANAGEMENT_ROLES = ["viewer", "operator", "admin"] as const;

/** `[tracking]`: the store every tracked pipeline writes to. */
export const TRACKING: TableSpec = {
  path: field(
    "string",
    text(),
    "Directory of the tracking store (an SQLite database in WAL mode), relative to the state " +
      "directory.",
    { default: "tracking", example: "/var/lib/gateway/tracking", path: "state" },
  ),
  max_age_hours: field(
    "number",
    positive(),
    "Records older than this are deleted (checked every `retention_interval_secs`).",
    { default: 168, example: 72 },
  ),
  max_bytes: field(
    "integer",
    int(1_048_576),
    "Largest size of the store on disk; past it the oldest records are deleted first.",
    { default: 1_073_741_824, example: 10_737_418_240 },
  ),
  retention_interval_secs: field(
    "number",
    positive(),
    "Seconds between two passes of the retention (age and size).",
    { default: 60, example: 300 },
  ),
  identity_file: field(
    "string",
    text(),
    "age identity file (`AGE-SECRET-KEY-1…`, made with `age-keygen`): content kept at rest is " +
      "encrypted (AES-256-GCM) under keys that the store holds only encrypted with age to this " +
      "identity's recipient; the identity opens them when an operator views or replays a " +
      "message. Keep it outside the store's directory (and its backups). Required when a " +
      "pipeline keeps content.",
    {
      path: "config",
      requiredWhen: "a pipeline's `tracking.content` is not empty",
      example: "/etc/gateway/tracking.age",
    },
  ),
  queue_size: field(
    "integer",
    int(1, 1_000_000),
    "Records waiting to be written, per data-plane isolate; past it records are dropped and " +
      "counted (the request never waits for the store).",
    { default: 10_000, example: 50_000 },
  ),
  batch_size: field(
    "integer",
    int(1, 100_000),
    "Most records written in one transaction.",
    { default: 500, example: 1000 },
  ),
  flush_interval_ms: field(
    "integer",
    int(1, 60_000),
    "Milliseconds between two writes of the waiting records.",
    { default: 200, example: 1000 },
  ),
};

/** `[pipelines.<name>.tracking]`: what one pipeline keeps of each message. */
export const PIPELINE_TRACKING: TableSpec = {
  enabled: field(
    "boolean",
    z.boolean(),
    "Record each request, DIMSE operation or HL7 message of this pipeline (time, endpoint, " +
      "status, duration, backends and their status, identifying metadata).",
    { default: true, example: false },
  ),
  content: field(
    "array of strings",
    z.array(z.enum(TRACKING_STAGES)),
    `Stages whose content is kept too, encrypted with \`[tracking] identity_file\`: ${
      TRACKING_STAGES.map((s) => `\`${s}\``).join(", ")
    }. Empty: metadata only. Replay and edit-and-resend need \`received\`.`,
    { default: [], example: ["received", "backend_response"] },
  ),
  max_content_bytes: field(
    "integer",
    int(0, 67_108_864),
    "Bytes of each stage's body kept; a longer body is kept cut (and marked so), and cannot be " +
      "replayed.",
    { default: 1_048_576, example: 262_144 },
  ),
};

/** `[management.tokens.<name>]`: a further bearer token of the management API, with a role. */
export const MANAGEMENT_TOKEN: TableSpec = {
  role: field(
    "string",
    z.enum(MANAGEMENT_ROLES),
    "`viewer` reads state and tracked messages' metadata; `operator` also views content, " +
      "replays and resends messages and retries dead letters; `admin` may do everything " +
      "(the `[management] token_file` token is admin).",
    { required: true, example: "viewer" },
  ),
  token: field(
    "string",
    text(),
    "The token, at least 32 characters; write it as `${VAR}` (never literally).",
    { secret: true, requiredWhen: "`token_file` is not set", example: "${GW_VIEWER_TOKEN}" },
  ),
  token_file: field(
    "string",
    text(),
    "File holding the token (relative to the main config file's directory).",
    { path: "config", requiredWhen: "`token` is not set", example: "/etc/gateway/viewer-token" },
  ),
};
