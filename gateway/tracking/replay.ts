/**
 * Replay: a tracked message's request, as received, rebuilt and sent through its pipeline again
 * (every backend it would call, or one named backend), or with an edited body (edit and resend).
 * The pipeline's authentication and client-side middleware (`api_key`, `basic_auth`, `jwt_auth`,
 * `ip_filter`, `rate_limit`) are left out: the operator's management token authorizes the replay,
 * and the original caller's identity (`auth.*` metadata) is carried over so that `match` tables
 * and header rules that use it behave as they did.
 */
import type { ContentLimits, GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { Body, RequestEnvelope, type ResponseEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import {
  type Backend,
  type BuiltPipeline,
  type ExecutorDeps,
  runPipeline,
} from "../pipeline/mod.ts";
import { REPLAYS } from "./capture.ts";
import type { CapturedStage } from "./content.ts";
import type { ReplayOutcome, ReplayRequest, TrackedMessage } from "./types.ts";

/** Middleware types a replay skips. */
export const REPLAY_SKIPPED_MIDDLEWARE: ReadonlySet<string> = new Set([
  "api_key",
  "basic_auth",
  "jwt_auth",
  "ip_filter",
  "rate_limit",
]);

/** The configuration serving now, as a replay needs it. */
export interface ReplayRuntime {
  config: GatewayConfig;
  pipelines: ReadonlyMap<string, BuiltPipeline>;
  deps: ExecutorDeps;
  acquire(): void;
  release(): void;
}

/** Bytes of the answer shown in a replay's outcome. */
const PREVIEW_BYTES = 4096;

/** The pipeline a replay runs: the current one of the message's name, trimmed as asked. */
export function replayPipeline(
  runtime: ReplayRuntime,
  message: TrackedMessage,
  backend: string | undefined,
): BuiltPipeline {
  const pipeline = runtime.pipelines.get(message.pipeline);
  if (!pipeline) {
    throw new GatewayError(
      409,
      "pipeline_not_found",
      `pipeline ${message.pipeline} is not in the configuration serving now`,
    );
  }
  const middleware = pipeline.middleware.filter((m) =>
    !REPLAY_SKIPPED_MIDDLEWARE.has(runtime.config.middleware[m.name]?.type ?? "")
  );
  let backends = pipeline.backends;
  if (backend !== undefined) {
    const b = pipeline.backends.find((x) => x.name === backend);
    if (!b) {
      throw new GatewayError(
        400,
        "unknown_backend",
        `backend ${backend} is not one of pipeline ${pipeline.name}'s (${
          pipeline.backends.map((x) => x.name).join(", ")
        })`,
      );
    }
    // The named backend is called whatever its `match` table says.
    const only: Backend = {
      name: b.name,
      config: { ...b.config, match: undefined },
      invoke: (req, call) => b.invoke(req, call),
      close: () => {},
    };
    backends = [only];
  }
  return { ...pipeline, middleware, backends };
}

/** The request of `received` (the stage as kept) as a new envelope, with `body` if edited. */
export function replayEnvelope(
  message: TrackedMessage,
  received: CapturedStage,
  request: ReplayRequest,
  limits?: ContentLimits,
  credentialParams: readonly string[] = [],
): RequestEnvelope {
  if (request.body === undefined && received.truncated) {
    throw new GatewayError(
      409,
      "content_truncated",
      `message ${message.id}'s body was kept cut at ${received.body.byteLength} of ${received.size} bytes ` +
        "(max_content_bytes): it cannot be replayed as it was; resend it with a body",
    );
  }
  const body = request.body ?? received.body;
  const contentType = request.content_type ?? received.content_type;
  const headers = new Headers();
  for (const [k, v] of Object.entries(received.headers)) {
    // The new body's framing is the runtime's to set.
    if (/^(content-length|transfer-encoding|host|connection|content-type)$/i.test(k)) continue;
    headers.set(k, v);
  }
  if (contentType) headers.set("content-type", contentType);
  const metadata: Record<string, string> = { ...(received.metadata ?? {}) };
  for (const [k, v] of Object.entries(message.metadata)) {
    if (k.startsWith("auth.")) metadata[k] = v;
  }
  const protocol = message.protocol === "dimse" || message.protocol === "mllp"
    ? message.protocol
    : "http";
  return new RequestEnvelope({
    id: crypto.randomUUID(),
    protocol,
    method: received.method ?? message.method,
    path: received.path ?? message.path,
    rawQuery: withoutParams(received.query ?? "", credentialParams),
    headers,
    metadata,
    body: new Body(body, contentType ?? null, limits),
    endpoint: message.endpoint,
  });
}

/**
 * The query parameters an `api_key` middleware of `config` reads its keys from: a replay skips the
 * middleware that would have removed them, so they are removed before the request goes on.
 */
export function keyQueryParams(config: GatewayConfig): string[] {
  return Object.values(config.middleware)
    .filter((m) => m.type === "api_key" && typeof m.options.query_param === "string")
    .map((m) => String(m.options.query_param));
}

/** `query` (`?a=1&b=2`, or empty) without the parameters named in `names`. */
export function withoutParams(query: string, names: readonly string[]): string {
  if (query === "" || names.length === 0) return query;
  const params = new URLSearchParams(query);
  for (const n of names) params.delete(n);
  const rest = params.toString();
  return rest === "" ? "" : `?${rest}`;
}

/** Runs the replay; the outcome says what the pipeline answered (errors included). */
export async function runReplay(
  runtime: ReplayRuntime,
  pipeline: BuiltPipeline,
  env: RequestEnvelope,
  mark: { replay_of: string; actor: string; edited: boolean },
): Promise<ReplayOutcome> {
  REPLAYS.set(env, mark);
  runtime.acquire();
  const backends = pipeline.backends.map((b) => b.name);
  try {
    const res = await runPipeline(pipeline, env, runtime.deps);
    return {
      replay_of: mark.replay_of,
      request_id: env.id,
      status: res.status,
      backends,
      ...(await preview(res)),
    };
  } catch (err) {
    const g = err instanceof GatewayError ? err : undefined;
    return {
      replay_of: mark.replay_of,
      request_id: env.id,
      status: g?.status ?? 500,
      error_code: g?.code ?? "internal_error",
      body_preview: g?.message ?? (err as Error).message,
      backends,
    };
  } finally {
    runtime.release();
  }
}

async function preview(
  res: ResponseEnvelope,
): Promise<{ content_type: string | null; body_preview: string }> {
  const bytes = await res.body.bytes().catch(() => new Uint8Array(0));
  return {
    content_type: res.body.contentType,
    body_preview: new TextDecoder("utf-8", { fatal: false }).decode(
      bytes.subarray(0, PREVIEW_BYTES),
    ),
  };
}
