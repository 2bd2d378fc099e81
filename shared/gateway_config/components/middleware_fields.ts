/**
 * Option fields several middleware types share.
 */
import { z } from "zod";
import { field, type TableSpec } from "../fields.ts";
import { text } from "../values.ts";

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
