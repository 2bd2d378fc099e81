/**
 * The `rate_limit` middleware type: its options table, as the registry (components/mod.ts) lists it.
 * `store = "memory"` keeps the buckets in the gateway (shared by its workers); `store = "redis"`
 * keeps them in a Redis server that every gateway of a cluster shares (docs/scaling.md).
 */
import { z } from "zod";
import type { ComponentType, RuleProblem } from "../component_type.ts";
import { field } from "../fields.ts";
import { int, text } from "../values.ts";

/** Where the buckets live. */
export const RATE_LIMIT_STORES = ["memory", "redis"] as const;
/** What a `redis` store does while Redis cannot be reached. */
export const RATE_LIMIT_STORE_ERROR_POLICIES = ["local", "allow", "deny"] as const;

/** A `redis://` or `rediss://` URL with a host and no credentials (those go in their own keys). */
const redisUrl = () =>
  text().max(2048).superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a redis:// or rediss:// URL" });
      return;
    }
    if ((url.protocol !== "redis:" && url.protocol !== "rediss:") || url.hostname === "") {
      ctx.addIssue({
        code: "custom",
        message: "must be a redis:// (plain) or rediss:// (TLS) URL with a host",
      });
    } else if (url.username !== "" || url.password !== "") {
      ctx.addIssue({
        code: "custom",
        message: "must not hold credentials: set `redis_username` and `redis_password` " +
          "(as `${VAR}`) or `redis_password_file`",
      });
    } else if (url.pathname !== "" && url.pathname !== "/" && !/^\/\d{1,2}$/.test(url.pathname)) {
      ctx.addIssue({ code: "custom", message: "the path may only name a database: /0 to /15" });
    } else if (url.search !== "" || url.hash !== "") {
      ctx.addIssue({ code: "custom", message: "must not have a query or fragment" });
    }
  });

/** Keys that only a `redis` store reads. */
const REDIS_KEYS = [
  "redis_url",
  "redis_username",
  "redis_password",
  "redis_password_file",
  "redis_ca_path",
  "redis_cert_path",
  "redis_key_path",
  "redis_timeout_ms",
  "redis_key_prefix",
  "on_store_error",
] as const;

function rules(o: Record<string, unknown>): RuleProblem[] {
  const problems: RuleProblem[] = [];
  if (o.store === "redis") {
    if (o.redis_url === undefined) {
      problems.push({
        key: "redis_url",
        message: 'missing `redis_url`: store = "redis" needs the server, e.g. ' +
          '"rediss://redis.internal:6380"',
      });
    }
    if (o.redis_password !== undefined && o.redis_password_file !== undefined) {
      problems.push({
        key: "redis_password_file",
        message: "set one of `redis_password` and `redis_password_file`, not both",
      });
    }
    if ((o.redis_cert_path === undefined) !== (o.redis_key_path === undefined)) {
      const missing = o.redis_cert_path === undefined ? "redis_cert_path" : "redis_key_path";
      problems.push({
        key: missing,
        message: `missing \`${missing}\`: set both redis_cert_path and redis_key_path, or neither`,
      });
    }
    const tls = typeof o.redis_url === "string" && o.redis_url.startsWith("rediss:");
    for (const key of ["redis_ca_path", "redis_cert_path"] as const) {
      if (o[key] !== undefined && !tls) {
        problems.push({ key, message: `\`${key}\` needs a rediss:// (TLS) \`redis_url\`` });
      }
    }
  } else {
    for (const key of REDIS_KEYS) {
      if (o[key] !== undefined) {
        problems.push({ key, message: `\`${key}\` applies only with store = "redis"` });
      }
    }
  }
  return problems;
}

/** `type = "rate_limit"`: the type's option schema. */
export const rateLimitMiddleware: ComponentType = {
  kind: "middleware",
  name: "rate_limit",
  doc: "A token bucket per key (client address, a header, or a metadata value such as " +
    "`auth.subject`); 429 `rate_limited` with Retry-After when it is empty. With " +
    '`store = "redis"` the buckets are shared by every gateway using the same Redis.',
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
      'Buckets kept in memory (least recently used forgotten); with `store = "redis"`, those of ' +
        "the local fallback.",
      {
        default: 100_000,
        example: 10_000,
      },
    ),
    store: field(
      "string",
      z.enum(RATE_LIMIT_STORES),
      "`memory`: buckets in this gateway, shared by its workers (each gateway of a cluster " +
        "enforces the whole limit on its own). `redis`: buckets in Redis, taken atomically by a " +
        "Lua script, so the limit holds across every gateway that uses the same server and " +
        "`redis_key_prefix` (docs/scaling.md).",
      { default: "memory", example: "redis" },
    ),
    redis_url: field(
      "string",
      redisUrl(),
      "`redis://host:port[/db]`, or `rediss://` for TLS; credentials go in `redis_username` " +
        "and `redis_password`. One connection per gateway isolate, commands pipelined on it.",
      { requiredWhen: '`store = "redis"`', example: "rediss://redis.internal:6380" },
    ),
    redis_username: field(
      "string",
      text().max(256),
      "ACL user name (Redis 6+); without it the password is the `requirepass` one.",
      { example: "gateway" },
    ),
    redis_password: field(
      "string",
      text().max(4096),
      "Password, as `${VAR}`.",
      { secret: true, example: "${REDIS_PASSWORD}" },
    ),
    redis_password_file: field(
      "string",
      text(),
      "A file holding the password (one line), instead of `redis_password`; read at each " +
        "configuration load.",
      { path: "config", example: "/run/secrets/redis-password" },
    ),
    redis_ca_path: field(
      "string",
      text(),
      "PEM CA certificates the server's certificate must chain to (`rediss://`); the system's " +
        "CAs otherwise.",
      { path: "config", example: "/etc/gateway/redis-ca.pem" },
    ),
    redis_cert_path: field(
      "string",
      text(),
      "PEM client certificate presented to the server (`rediss://` with `tls-auth-clients`).",
      { path: "config", example: "/etc/gateway/redis-client.pem" },
    ),
    redis_key_path: field("string", text(), "PEM private key of `redis_cert_path`.", {
      path: "config",
      example: "/etc/gateway/redis-client-key.pem",
    }),
    redis_timeout_ms: field(
      "integer",
      int(5, 10_000),
      "Longest wait for Redis's answer; past it the request is decided by `on_store_error` " +
        "(a connection attempt is given at least 1 s, in the background: requests do not wait " +
        "for it).",
      { defaultDoc: "100", example: 50 },
    ),
    redis_key_prefix: field(
      "string",
      z.string().min(1).max(200).regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces"),
      "Put before every bucket's key (`<prefix><middleware>:<SHA-256 of the client key>`): " +
        "gateways with the same prefix and middleware name share buckets.",
      { defaultDoc: "`gateway:rate_limit:`", example: "hospital-a:rl:" },
    ),
    on_store_error: field(
      "string",
      z.enum(RATE_LIMIT_STORE_ERROR_POLICIES),
      "While Redis cannot be reached (refused, timed out, an error): `local` takes from this " +
        "gateway's own buckets (the limit then holds per gateway), `allow` lets every request " +
        "through (fail open), `deny` answers 503 `rate_limit_unavailable` (fail closed). The " +
        "change of state is logged once, counted in `gateway_rate_limit_store_errors_total` and " +
        "shown as the degraded component `rate_limit.<name>`.",
      { defaultDoc: "`local`", example: "deny" },
    ),
  },
  rules,
};
