/**
 * Options of the cloud service: flags, the environment, defaults. Flags win over the environment,
 * the environment over defaults. Tests build options directly with {@link resolveOptions}.
 */
import { parseArgs } from "node:util";
import { type Clock, systemClock } from "./clock.ts";
import { Logger, silentLogger } from "../shared/mod.ts";
import { DEFAULT_RATE_LIMITS, type RateLimits } from "./rate_limit/mod.ts";
import { PREVIEW_DEADLINE_MS } from "./preview/mod.ts";

/** OWASP's PBKDF2-HMAC-SHA256 iteration count (Password Storage Cheat Sheet, 2023). */
export const OWASP_PBKDF2_ITERATIONS = 600_000;

/** Everything the service needs to run. */
export interface CloudOptions {
  /** TCP port (0: any free port). */
  port: number;
  /**
   * Address to bind: by default the loopback address of a loopback base URL (development mode:
   * nothing off this machine reaches the service), else every address.
   */
  hostname: string;
  /** Public URL of the service: the issuer of every token and the base of every link. */
  baseUrl: string;
  /** Directory of the local KV file (`cloud.sqlite`). */
  dataDir: string;
  /** A KV Connect URL (remote Deno KV); with it, `dataDir` is not used for state. */
  kvUrl?: string;
  /**
   * The KV database is the platform's (Deno Deploy's `Deno.openKv()`): there are no local files
   * to restrict and no data directory to write.
   */
  managedKv?: boolean;
  /** Whether anyone may create an account in the web UI. */
  signup: boolean;
  /** PBKDF2 iterations for new password hashes (OWASP's count unless a test lowers it). */
  passwordIterations: number;
  /** Take the client address from the first `X-Forwarded-For` entry (behind a load balancer). */
  trustProxy: boolean;
  /** Lifetime of user tokens (JWTs), seconds. */
  userTokenTtlSeconds: number;
  /** Lifetime of a device code, seconds. */
  deviceCodeTtlSeconds: number;
  /** Minimum polling interval of the device flow, seconds. */
  deviceIntervalSeconds: number;
  /** Lifetime of a web session, seconds. */
  sessionTtlSeconds: number;
  /** Longest configuration long poll, seconds. */
  maxLongPollSeconds: number;
  /** Request budgets. */
  rateLimits: RateLimits;
  /** Time source. */
  clock: Clock;
  /** Where log lines go. */
  logger: Logger;
  /**
   * Base64 of the 32-byte key that encrypts the signing keys at rest (`CLOUD_KEY_ENCRYPTION_KEY`);
   * required unless the base URL is loopback (development mode, see auth/key_encryption.ts).
   */
  keyEncryptionKey?: string;
  /**
   * A file holding that key (`CLOUD_KEY_ENCRYPTION_KEY_FILE`), for setups that keep secrets in
   * files (a mounted secret, a file made once for `deno serve`); not with `keyEncryptionKey`.
   */
  keyEncryptionKeyFile?: string;
  /** How long one JOLT preview may run in its worker before it is stopped, ms. */
  previewDeadlineMs: number;
}

/** Options that callers may set; the rest get defaults. */
export type CloudOptionsInput = Partial<CloudOptions>;

/**
 * The address bound when none is given: for a loopback base URL (or none: it defaults to
 * `http://localhost:PORT`) that loopback address, so a development service is not reachable from
 * the network; for any other base URL every address (`0.0.0.0`), as a public service needs.
 */
export function defaultHostname(baseUrl: string | undefined): string {
  if (baseUrl === undefined) return "127.0.0.1";
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost") return "127.0.0.1";
  if (host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)) return host;
  return "0.0.0.0";
}

/** Fills in defaults and normalizes `baseUrl` (no trailing slash). */
export function resolveOptions(input: CloudOptionsInput = {}): CloudOptions {
  const port = input.port ?? 8000;
  const baseUrl = normalizeBaseUrl(input.baseUrl ?? `http://localhost:${port}`);
  return {
    port,
    hostname: input.hostname ?? defaultHostname(input.baseUrl),
    baseUrl,
    dataDir: input.dataDir ?? "./data",
    kvUrl: input.kvUrl,
    managedKv: input.managedKv,
    signup: input.signup ?? true,
    passwordIterations: input.passwordIterations ?? OWASP_PBKDF2_ITERATIONS,
    trustProxy: input.trustProxy ?? false,
    userTokenTtlSeconds: input.userTokenTtlSeconds ?? 24 * 60 * 60,
    deviceCodeTtlSeconds: input.deviceCodeTtlSeconds ?? 600,
    deviceIntervalSeconds: input.deviceIntervalSeconds ?? 5,
    sessionTtlSeconds: input.sessionTtlSeconds ?? 12 * 60 * 60,
    maxLongPollSeconds: input.maxLongPollSeconds ?? 60,
    rateLimits: { ...DEFAULT_RATE_LIMITS, ...input.rateLimits },
    clock: input.clock ?? systemClock,
    logger: input.logger ?? silentLogger,
    keyEncryptionKey: input.keyEncryptionKey,
    keyEncryptionKeyFile: input.keyEncryptionKeyFile,
    previewDeadlineMs: input.previewDeadlineMs ?? PREVIEW_DEADLINE_MS,
  };
}

/** `https://x.example/` -> `https://x.example`; throws on anything but an http(s) URL. */
export function normalizeBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`base URL ${JSON.stringify(text)} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`base URL ${JSON.stringify(text)} must start with http:// or https://`);
  }
  if (url.search || url.hash) throw new Error("base URL must not have a query or fragment");
  if (url.pathname !== "/") {
    throw new Error(
      `base URL ${
        JSON.stringify(text)
      } must be the root of a host (no path): the service serves from /`,
    );
  }
  return url.href.replace(/\/+$/, "");
}

/** The command line: which command, the options, and the command's own arguments. */
export interface ParsedCommandLine {
  command: "serve" | "user:create" | "keys:rotate" | "token:create" | "help";
  options: CloudOptionsInput;
  /** Flags of `user:create` and `token:create`. */
  user: {
    email?: string;
    name?: string;
    team?: string;
    passwordStdin: boolean;
    expiresInDays?: number;
  };
}

/** Usage text of the `cloud` executable. */
export const USAGE = `Usage: cloud [command] [flags]

Commands:
  serve (default)   run the service
  user:create       create a user (and their team): --email, --name, --team;
                    the password comes from CLOUD_USER_PASSWORD or, with --password-stdin, stdin
  token:create      create an API token for a user (headless; printed once): --email, --name,
                    [--team NAME] (default: the user's first team), [--expires-in-days N]
  keys:rotate       publish a new token signing key; it signs from 15 minutes later, when every
                    verifier's cached key set has it (old keys stay published until their tokens
                    expire)

Flags (environment variable in brackets):
  --port N          TCP port, default 8000 [CLOUD_PORT]
  --hostname ADDR   address to bind [CLOUD_HOSTNAME]; default 127.0.0.1 when the base URL is
                    loopback (development mode, the default), else 0.0.0.0
  --base-url URL    public URL and token issuer, default http://localhost:PORT
                    (http://ADDR:PORT for a non-loopback --hostname) [CLOUD_BASE_URL]
  --data-dir DIR    directory of the local KV file, default ./data [CLOUD_DATA_DIR]
  --kv URL          remote KV Connect URL (token in DENO_KV_ACCESS_TOKEN) [CLOUD_KV_URL]
  --no-signup       turn off sign-up in the web UI [CLOUD_SIGNUP=false]
  --trust-proxy     client address from X-Forwarded-For [CLOUD_TRUST_PROXY=true]
  --token-rate N    requests per minute allowed per token, default 600 [CLOUD_TOKEN_RATE]
  --log-level L     error|warn|info|debug, default info [CLOUD_LOG_LEVEL]

Secrets (environment only):
  CLOUD_KEY_ENCRYPTION_KEY  base64 of 32 bytes (openssl rand -base64 32) that encrypts the
                    token signing keys in KV; required unless --base-url is loopback
  CLOUD_KEY_ENCRYPTION_KEY_FILE  a file holding that base64 text instead (not with the above)

Tests only: CLOUD_TEST_PBKDF2_ITERATIONS lowers the PBKDF2 iteration count of new password
hashes (OWASP's 600000 otherwise); never set it in production.`;

const COMMANDS = ["serve", "user:create", "keys:rotate", "token:create", "help"] as const;

/** Parses `args` (flags, then env) into a command and options; throws with a message on errors. */
export function parseCommandLine(
  args: string[],
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): ParsedCommandLine {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: "string" },
      hostname: { type: "string" },
      "base-url": { type: "string" },
      "data-dir": { type: "string" },
      kv: { type: "string" },
      signup: { type: "boolean" },
      "no-signup": { type: "boolean" },
      "trust-proxy": { type: "boolean" },
      "token-rate": { type: "string" },
      "log-level": { type: "string" },
      email: { type: "string" },
      name: { type: "string" },
      team: { type: "string" },
      "password-stdin": { type: "boolean" },
      "expires-in-days": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const command = values.help ? "help" : (positionals[0] ?? "serve");
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new Error(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
  }
  const portText = values.port ?? env("CLOUD_PORT");
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`--port must be an integer 0-65535, got ${JSON.stringify(portText)}`);
  }
  const iterations = env("CLOUD_TEST_PBKDF2_ITERATIONS");
  const level = values["log-level"] ?? env("CLOUD_LOG_LEVEL") ?? "info";
  if (!["error", "warn", "info", "debug"].includes(level)) {
    throw new Error(`--log-level must be error, warn, info or debug, got ${JSON.stringify(level)}`);
  }
  const signupEnv = env("CLOUD_SIGNUP");
  const baseUrlText = values["base-url"] ?? env("CLOUD_BASE_URL");
  const tokenRateText = values["token-rate"] ?? env("CLOUD_TOKEN_RATE");
  const tokenRate = tokenRateText === undefined ? undefined : Number(tokenRateText);
  if (tokenRate !== undefined && (!Number.isInteger(tokenRate) || tokenRate < 1)) {
    throw new Error(
      `--token-rate must be a positive integer, got ${JSON.stringify(tokenRateText)}`,
    );
  }
  const options: CloudOptionsInput = {
    port,
    hostname: values.hostname ?? env("CLOUD_HOSTNAME"),
    baseUrl: baseUrlText === undefined ? undefined : normalizeBaseUrl(baseUrlText),
    dataDir: values["data-dir"] ?? env("CLOUD_DATA_DIR"),
    kvUrl: values.kv ?? env("CLOUD_KV_URL"),
    signup: values["no-signup"]
      ? false
      : values.signup ?? (signupEnv ? signupEnv !== "false" : undefined),
    trustProxy: values["trust-proxy"] ?? (env("CLOUD_TRUST_PROXY") === "true" || undefined),
    passwordIterations: iterations === undefined ? undefined : positiveInt(iterations),
    rateLimits: tokenRate === undefined
      ? undefined
      : { ...DEFAULT_RATE_LIMITS, perToken: { limit: tokenRate, windowSeconds: 60 } },
    logger: new Logger({ level: level as "info", format: "json" }),
    keyEncryptionKey: env("CLOUD_KEY_ENCRYPTION_KEY"),
    keyEncryptionKeyFile: env("CLOUD_KEY_ENCRYPTION_KEY_FILE"),
  };
  for (const key of Object.keys(options) as (keyof CloudOptionsInput)[]) {
    if (options[key] === undefined) delete options[key];
  }
  return {
    command: command as ParsedCommandLine["command"],
    options,
    user: {
      email: values.email,
      name: values.name,
      team: values.team,
      passwordStdin: values["password-stdin"] ?? false,
      expiresInDays: values["expires-in-days"] === undefined
        ? undefined
        : days(values["expires-in-days"]),
    },
  };
}

function days(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 3650) {
    throw new Error(`--expires-in-days must be a whole number from 1 to 3650, got ${text}`);
  }
  return n;
}

function positiveInt(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    throw new Error(`CLOUD_TEST_PBKDF2_ITERATIONS must be a positive integer, got ${text}`);
  }
  return n;
}
