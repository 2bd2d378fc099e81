/**
 * The `api_key` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { forwardCredentials, headerName } from "./middleware_fields.ts";

/** Names of API keys and users: they become `auth.subject`. */
const NAME_PATTERN = /^[A-Za-z0-9_.@-]{1,100}$/;

/** `type = "api_key"`: the type's option schema. */
export const apiKeyMiddleware: ComponentType = {
  kind: "middleware",
  name: "api_key",
  doc: "Requires an API key (a header, or a query parameter when set); the key's name becomes " +
    "`auth.subject`. Keys are stored as SHA-256 hashes (`printf %s KEY | sha256sum`).",
  fields: {
    header: field("string", headerName, "Header carrying the key.", {
      default: "x-api-key",
      example: "x-api-key",
    }),
    query_param: field(
      "string",
      z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "1-64 letters, digits, `_`, `.` or `-`"),
      "Query parameter that may carry the key instead (keys in URLs end up in logs: prefer the header).",
      { example: "api_key" },
    ),
    keys: field(
      "table of strings",
      z.record(
        z.string().regex(NAME_PATTERN, "key names: letters, digits, `_`, `.`, `-`, `@`"),
        z.string().regex(/^sha256:[0-9a-fA-F]{64}$/, "`sha256:` and 64 hex digits of the key"),
      ).refine((keys) => Object.keys(keys).length > 0, "at least one key"),
      "Key name -> `sha256:<hex>` of the key; the name becomes `auth.subject`.",
      {
        required: true,
        example: {
          lab_system: "sha256:4c716d4cf211c7b7d2f3233c941771ad0507ea5bacf93b492766aa41ae9f720d",
        },
      },
    ),
    forward_credentials: forwardCredentials("the key"),
  },
};
