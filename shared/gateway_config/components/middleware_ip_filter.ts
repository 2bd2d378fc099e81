/**
 * The `ip_filter` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { addressRange } from "../values.ts";

/** `type = "ip_filter"`: the type's option schema. */
export const ipFilterMiddleware: ComponentType = {
  kind: "middleware",
  name: "ip_filter",
  doc: "Allow and deny lists of client addresses and CIDR ranges (IPv4, IPv6); 403 " +
    "`ip_denied` otherwise. Behind `trusted_proxies`, the client is read from X-Forwarded-For.",
  fields: {
    allow: field(
      "array of strings",
      z.array(addressRange()),
      "Only these addresses and ranges may pass (empty: any not denied).",
      { default: [], example: ["10.20.0.0/16", "fd00:20::/32"] },
    ),
    deny: field("array of strings", z.array(addressRange()), "Never these (deny wins).", {
      default: [],
      example: ["10.20.99.0/24"],
    }),
    trusted_proxies: field(
      "array of strings",
      z.array(addressRange()),
      "Proxies whose X-Forwarded-For names the client (read from the right).",
      { default: [], example: ["10.0.0.5"] },
    ),
  },
  rules: (o) =>
    (o.allow as unknown[]).length === 0 && (o.deny as unknown[]).length === 0
      ? [{
        key: "allow",
        message: "set `allow`, `deny` or both: an empty filter passes everyone",
      }]
      : [],
};
