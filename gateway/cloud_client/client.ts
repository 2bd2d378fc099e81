/**
 * The HTTP client of the cloud service's gateway-facing API (docs/cloud-api.md, "Gateway
 * authorization and sync"). Every failure is one of two errors: the service could not be reached
 * ({@link CloudUnreachableError}) or it answered with an error ({@link CloudHttpError}, carrying
 * its code and message). Tokens travel only in the Authorization header and never in a message.
 */
import { redactUrlCredentialsDeep } from "../../shared/gateway_config/mod.ts";
import type { GatewayStatusBody } from "../../shared/mod.ts";

/** Timeout of a call (the long poll adds its wait). */
export const CALL_TIMEOUT_MS = 15_000;

/** The cloud service could not be reached (connection refused, DNS, TLS, timeout). */
export class CloudUnreachableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`the cloud service at ${url} cannot be reached: ${describeCause(cause)}`);
    this.name = "CloudUnreachableError";
  }
}

/** The cloud service answered with an error status. */
export class CloudHttpError extends Error {
  readonly status: number;
  /** The cloud's error code (`unauthorized`, `not_found`, …), or `http_<status>`. */
  readonly code: string;
  /** Seconds from `Retry-After`, when sent. */
  readonly retryAfterSecs?: number;

  constructor(status: number, code: string, message: string, retryAfterSecs?: number) {
    super(message);
    this.name = "CloudHttpError";
    this.status = status;
    this.code = code;
    this.retryAfterSecs = retryAfterSecs;
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof DOMException && cause.name === "TimeoutError") return "timed out";
  const msg = cause instanceof Error ? cause.message : String(cause);
  return msg.length > 300 ? msg.slice(0, 297) + "..." : msg;
}

/** A successful (2xx or 304) answer. */
export interface CloudAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** Options of one call. */
export interface CallOptions {
  /** Bearer token (machine or user token). */
  token?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as text with `contentType`. */
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** The desired configuration answered by `GET /api/gateway/config`. */
export interface PulledConfig {
  gateway_id: string;
  version: number;
  etag: string;
  generated_at: string;
  toml: string;
  transforms: { id: string; name: string; file: string; sha256: string; url: string }[];
  pipelines: string[];
  skipped: { pipeline: string; reason: string }[];
}

/** One problem of an apply report. */
export interface ApplyError {
  path?: string;
  message: string;
}

/** Body of `POST /api/gateway/status`. */
export type StatusBody = GatewayStatusBody;

/** Answer of `PUT /api/gateway/config/local`. */
export interface UploadAnswer {
  size: number;
  sha256: string;
  uploaded_at: string;
  problems: { path: string; line?: number; message: string }[];
}

/** Told the call (`POST /api/gateway/status`) and the keys whose URL credentials were redacted. */
export type RedactionListener = (call: string, keys: string[]) => void;

/**
 * Calls one cloud service. Every JSON body (status and apply reports) leaves with the credentials
 * of any URL in any of its strings redacted (an expanded `${VAR}` may land in a message).
 */
export class CloudClient {
  readonly baseUrl: string;
  readonly #fetch: typeof fetch;
  readonly #onRedacted: RedactionListener | undefined;

  constructor(baseUrl: string, fetchImpl: typeof fetch = fetch, onRedacted?: RedactionListener) {
    this.baseUrl = baseUrl;
    this.#fetch = fetchImpl;
    this.#onRedacted = onRedacted;
  }

  /** One call; resolves for 2xx and 304, throws CloudHttpError or CloudUnreachableError. */
  async call(method: string, path: string, opts: CallOptions = {}): Promise<CloudAnswer> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.json !== undefined) {
      const { value, paths } = redactUrlCredentialsDeep(opts.json);
      if (paths.length) this.#onRedacted?.(`${method} ${path.split("?")[0]}`, paths);
      body = JSON.stringify(value);
      headers["content-type"] = "application/json";
    } else if (opts.text !== undefined) {
      body = opts.text;
      headers["content-type"] = opts.contentType ?? "text/plain; charset=utf-8";
    }
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? CALL_TIMEOUT_MS);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await this.#fetch(url, { method, headers, body, signal, redirect: "manual" });
      text = await res.text();
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason ?? err;
      throw new CloudUnreachableError(this.baseUrl, err);
    }
    if ((res.status >= 200 && res.status < 300) || res.status === 304) {
      return { status: res.status, headers: res.headers, text };
    }
    throw httpError(res, text);
  }

  /** GET `/api/gateway/self`: the gateway the machine token stands for (checks revocation). */
  async self(token: string): Promise<{ gateway_id: string; gateway_code: string }> {
    return parse(await this.call("GET", "/api/gateway/self", { token }));
  }

  /** POST `/api/gateway/authorize` with a user token: a machine-token payload. */
  async authorize(userToken: string, gatewayCode: string): Promise<unknown> {
    return parse(
      await this.call("POST", "/api/gateway/authorize", {
        token: userToken,
        json: { gateway_code: gatewayCode },
      }),
    );
  }

  /** GET `/api/gateway/config`: null when not modified (304) within the wait. */
  async pullConfig(
    token: string,
    etag: string | null,
    waitSecs: number,
    signal?: AbortSignal,
  ): Promise<PulledConfig | null> {
    const answer = await this.call("GET", `/api/gateway/config?wait=${etag ? waitSecs : 0}`, {
      token,
      headers: etag ? { "if-none-match": etag } : {},
      signal,
      timeoutMs: CALL_TIMEOUT_MS + waitSecs * 1000,
    });
    return answer.status === 304 ? null : parse(answer);
  }

  /** POST `/api/gateway/config/apply`. */
  async reportApply(
    token: string,
    report: { version: number; status: "applied" | "failed"; errors: ApplyError[] },
    signal?: AbortSignal,
  ): Promise<void> {
    await this.call("POST", "/api/gateway/config/apply", { token, json: report, signal });
  }

  /** POST `/api/gateway/status`. */
  async reportStatus(token: string, status: StatusBody, signal?: AbortSignal): Promise<void> {
    await this.call("POST", "/api/gateway/status", { token, json: status, signal });
  }

  /** PUT `/api/gateway/config/local` with the TOML text. */
  async uploadLocalConfig(token: string, toml: string): Promise<UploadAnswer> {
    return parse(
      await this.call("PUT", "/api/gateway/config/local", {
        token,
        text: toml,
        contentType: "application/toml; charset=utf-8",
      }),
    );
  }

  /** GET `/api/gateway/transforms/{id}`: the spec text. */
  async downloadTransform(token: string, id: string, signal?: AbortSignal): Promise<string> {
    const answer = await this.call("GET", `/api/gateway/transforms/${encodeURIComponent(id)}`, {
      token,
      signal,
    });
    return answer.text;
  }

  /** POST `/api/gateway/token/renew`: a new machine-token payload. */
  async renew(token: string, signal?: AbortSignal): Promise<unknown> {
    return parse(await this.call("POST", "/api/gateway/token/renew", { token, signal }));
  }

  /** GET `/.well-known/jwks.json`. */
  async jwks(): Promise<unknown> {
    return parse(await this.call("GET", "/.well-known/jwks.json"));
  }
}

// deno-lint-ignore no-explicit-any
function parse(answer: CloudAnswer): any {
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new CloudHttpError(
      answer.status,
      "invalid_response",
      "the cloud service answered with a body that is not JSON",
    );
  }
}

function httpError(res: Response, text: string): CloudHttpError {
  let code = `http_${res.status}`;
  let message = `HTTP ${res.status}`;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string") code = body.error.code;
    if (typeof body.error?.message === "string") message = body.error.message;
  } catch {
    if (text.trim()) message = `HTTP ${res.status}: ${text.trim().slice(0, 200)}`;
  }
  const retry = Number(res.headers.get("retry-after"));
  return new CloudHttpError(
    res.status,
    code,
    message,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}
