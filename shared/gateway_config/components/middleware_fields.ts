/**
 * Option fields several middleware types share.
 */
import { z } from "zod";
import { field, type TableSpec } from "../fields.ts";
import { int, text } from "../values.ts";

/** An HTTP header name (RFC 9110 token), matched case-insensitively. */
export const headerName = z.string().regex(
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/,
  "an HTTP header name",
);

/** `realm` of an authentication middleware's challenge. */
export const realmField = (example: string) =>
  field(
    "string",
    z.string().min(1).max(100).regex(/^[^"\\\r\n]*$/, "no quotes, backslashes or line breaks"),
    "Realm named in the `WWW-Authenticate` challenge.",
    { default: "gateway", example },
  );

/** `forward_credentials` of an authentication middleware: what it removes unless set. */
export const forwardCredentials = (what: string) =>
  field("boolean", z.boolean(), `Pass ${what} on to the backend (else it is removed).`, {
    default: false,
    example: true,
  });

/** The options of `transform` and `metadata_transform`. */
export const transformFields = (kind: "data" | "metadata"): TableSpec => ({
  spec_path: field("string", text(), "JOLT spec file, relative to `transforms_path`.", {
    path: "transforms",
    required: true,
    example: "patient.json",
  }),
  apply: kind === "data"
    ? field(
      "string",
      z.enum(["left", "right", "both"]),
      "`left`: requests; `right`: responses; `both`.",
      { default: "left", example: "both" },
    )
    : field(
      "string",
      z.enum(["left"]),
      "Only `left`: metadata belongs to requests.",
      { default: "left", example: "left" },
    ),
  fail_on_error: field(
    "boolean",
    z.boolean(),
    "Fail the request when the transform fails (else log and continue).",
    {
      default: true,
      example: false,
    },
  ),
  max_steps: field(
    "integer",
    // shared/jolt's RUN_STEPS_RANGE and MAX_RUN_STEPS (the config does not load the engine;
    // shared/jolt/engine/limits_test.ts checks that they agree).
    int(10_000, 100_000_000),
    "Work steps one run of the spec may spend (a step is about one key tried or one level " +
      "written; an 8.8 MB FHIR bundle through four operations takes 2.2 million, and 10 million " +
      "take 0.1-0.5 s). Past them the request fails with 422 `transform_budget_exceeded`, so no " +
      "body can hold the isolate. Raise it for bodies larger than the default `max_body_size`; " +
      "at most 100 million (seconds of work, within the watchdog's default `watchdog_kill_ms`).",
    { default: 10_000_000, example: 50_000_000 },
  ),
  ...(kind === "data"
    ? {
      debug: field("boolean", z.boolean(), "Log transform input and output at debug level.", {
        default: false,
        example: true,
      }),
      input: field(
        "string",
        z.enum(["data", "envelope"]),
        "`data`: the spec sees the body data; `envelope`: it sees `{data, context}` (see transforms docs).",
        { default: "data", example: "envelope" },
      ),
    }
    : {}),
});
