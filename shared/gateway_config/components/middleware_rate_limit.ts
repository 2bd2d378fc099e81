/**
 * The `rate_limit` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { int } from "../values.ts";

/** `type = "rate_limit"`: the type's option schema. */
export const rateLimitMiddleware: ComponentType = {
  kind: "middleware",
  name: "rate_limit",
  doc: "A token bucket per key (client address, a header, or a metadata value such as " +
    "`auth.subject`); 429 `rate_limited` with Retry-After when it is empty.",
  fields: {
    requests_per_second: field(
      "number",
      z.number().positive().max(1_000_000),
      "Refill rate of each key's bucket.",
      { required: true, example: 20 },
    ),
    burst: field("integer", int(1, 1_000_000), "Bucket size: requests allowed at once.", {
      defaultDoc: "`requests_per_second` rounded up",
      example: 40,
    }),
    key: field(
      "string",
      z.string().regex(
        /^(client_ip|header:[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}|metadata:[A-Za-z0-9_.-]{1,100})$/,
        "`client_ip`, `header:<name>` or `metadata:<key>`",
      ),
      "What a bucket belongs to; `client_ip` honours `ip_filter`'s trusted proxies when one runs first.",
      { default: "client_ip", example: "metadata:auth.subject" },
    ),
    max_keys: field(
      "integer",
      int(1, 10_000_000),
      "Buckets kept (least recently used forgotten).",
      {
        default: 100_000,
        example: 10_000,
      },
    ),
  },
};
