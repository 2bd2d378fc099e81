/**
 * The `basic_auth` middleware type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { int, text } from "../values.ts";
import { forwardCredentials, realmField } from "./middleware_fields.ts";

/** `type = "basic_auth"`: the type's option schema. */
export const basicAuthMiddleware: ComponentType = {
  kind: "middleware",
  name: "basic_auth",
  doc: "HTTP Basic authentication against an htpasswd file (bcrypt or Argon2 hashes only, " +
    "`htpasswd -B`); the user name becomes `auth.subject`.",
  fields: {
    htpasswd_path: field("string", text(), "htpasswd file, read at load and on every reload.", {
      path: "config",
      required: true,
      example: "users.htpasswd",
    }),
    realm: realmField("radiology"),
    forward_credentials: forwardCredentials("the Authorization header"),
    address_checks_per_minute: field(
      "integer",
      int(1, 1_000_000),
      "Password checks one client address may cause per minute (remembered answers are " +
        "free); beyond them 429 `too_many_password_checks`, before any hashing.",
      { default: 30, example: 120 },
    ),
    address_check_burst: field(
      "integer",
      int(1, 100_000),
      "Password checks one client address may cause at once, before the per-minute rate.",
      { default: 10, example: 50 },
    ),
    max_addresses: field(
      "integer",
      int(1, 1_000_000),
      "Client addresses whose check budgets are kept (least recently used forgotten).",
      { default: 10_000, example: 100_000 },
    ),
  },
};
