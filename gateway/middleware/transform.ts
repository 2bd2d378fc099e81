/**
 * The `transform` middleware: a JOLT spec applied to the normalized body data of requests (`apply
 * = "left"`), responses (`"right"`) or both.
 *
 * By default the spec sees the data itself and its output replaces the data. With
 * `input = "envelope"` it sees `{ data, context }`, where `context` holds the request (method,
 * path, headers, query, metadata) and on the way out the response (status, headers); the output's
 * `data` becomes the new data, and on requests an output `metadata` object (string values)
 * replaces the request metadata.
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import { JoltBudgetExceeded } from "../../shared/jolt/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import {
  headersToObject,
  queryToObject,
  type RequestEnvelope,
  type ResponseEnvelope,
} from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { BuildContext, Middleware } from "../pipeline/mod.ts";
import { SpecFile } from "./spec_file.ts";
import { FileTransformSource, type TransformSource } from "./transform_source.ts";

/** Options of a `transform` middleware after validation. */
interface TransformOptions {
  spec_path: string;
  apply: "left" | "right" | "both";
  fail_on_error: boolean;
  debug: boolean;
  input: "data" | "envelope";
  /** Work steps one run may spend (JOLT's budget). */
  max_steps?: number;
}

function readOptions(config: MiddlewareConfig): TransformOptions {
  const o = config.options;
  const input = (o.input ?? "data") as string;
  if (input !== "data" && input !== "envelope") {
    throw new Error(`options.input must be "data" or "envelope", not ${JSON.stringify(input)}`);
  }
  return {
    spec_path: String(o.spec_path),
    apply: (o.apply ?? "left") as TransformOptions["apply"],
    fail_on_error: o.fail_on_error !== false,
    debug: o.debug === true,
    input,
    max_steps: o.max_steps === undefined ? undefined : Number(o.max_steps),
  };
}

/** Metadata from a transform output: a flat object of strings, else a clear error. */
export function toMetadata(value: unknown, what: string): Record<string, string> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${what} must be an object of strings, got ${describe(value)}`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") {
      throw new Error(`${what}.${k} must be a string, got ${describe(v)}`);
    }
    out[k] = v;
  }
  return out;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `${typeof v} ${JSON.stringify(v)}`;
}

/** The transform middleware. */
export class TransformMiddleware implements Middleware {
  readonly name: string;
  readonly acts: { request: boolean; response: boolean };
  readonly #opts: TransformOptions;
  readonly #spec: SpecFile;
  readonly #logger: Logger;

  constructor(name: string, opts: TransformOptions, spec: SpecFile, logger: Logger) {
    this.name = name;
    this.#opts = opts;
    this.#spec = spec;
    this.#logger = logger;
    this.acts = {
      request: opts.apply === "left" || opts.apply === "both",
      response: opts.apply === "right" || opts.apply === "both",
    };
  }

  /** Transform the request data. */
  onRequest(req: RequestEnvelope): Promise<void> | void {
    if (!this.#inMemoryRaw(req.body, req, undefined)) return this.#run(req.body, req, undefined);
  }

  /** Transform the response data. */
  onResponse(res: ResponseEnvelope, req: RequestEnvelope): Promise<void> | void {
    if (!this.#inMemoryRaw(res.body, req, res)) return this.#run(res.body, req, res);
  }

  /**
   * The raw JSON path (see #run) for a body already in memory, done at once: no promise, no
   * turn of the event loop. False when it does not apply; #run then does the work. A failure is
   * handled here (not run a second time there: a spent work budget would be spent twice).
   */
  #inMemoryRaw(
    body: RequestEnvelope["body"],
    req: RequestEnvelope,
    res: ResponseEnvelope | undefined,
  ): boolean {
    if (this.#opts.input !== "data" || this.#opts.debug) return false;
    const bytes = body.bufferedUnparsedJson();
    if (bytes === null) return false;
    let output: Uint8Array | null;
    try {
      output = this.#spec.spec.applyJson(bytes);
    } catch (err) {
      this.#failed(err, req, res);
      return true;
    }
    if (output === null) return false;
    body.setJsonBytes(output);
    return true;
  }

  async #run(
    body: RequestEnvelope["body"],
    req: RequestEnvelope,
    res: ResponseEnvelope | undefined,
  ): Promise<void> {
    // Only structured data is transformed: empty and binary bodies pass untouched.
    const format = body.format;
    if (format === "none" || format === "binary") return;
    const direction = res ? "response" : "request";
    try {
      // A JSON body nobody has parsed yet goes through specs that can work on its bytes
      // (a lone shift) without being parsed into objects and serialized back.
      if (this.#opts.input === "data" && !this.#opts.debug) {
        const bytes = await body.unparsedJson();
        const output = bytes && this.#spec.spec.applyJson(bytes);
        if (output) return body.setJsonBytes(output);
      }
      const data = await body.data();
      const input = this.#opts.input === "envelope" ? { data, context: context(req, res) } : data;
      const output = this.#spec.spec.apply(input);
      if (this.#opts.debug && this.#logger.enabled("debug")) {
        this.#logger.debug("transform applied", {
          middleware: this.name,
          request_id: req.id,
          direction,
          spec: this.#spec.file,
          input,
          output,
        });
      }
      if (this.#opts.input === "envelope") {
        if (output === null || typeof output !== "object" || !("data" in output)) {
          throw new Error('with input = "envelope" the transform output must have a "data" key');
        }
        const o = output as Record<string, unknown>;
        if (!res && "metadata" in o) req.metadata = toMetadata(o.metadata, "output metadata");
        body.setData(o.data);
      } else {
        body.setData(output);
      }
    } catch (err) {
      this.#failed(err, req, res);
    }
  }

  /**
   * A failed transform: with `fail_on_error` an error response, else a warning and the data as
   * it was. A run past the engine's work budget (a body with too many keys or elements for the
   * spec) is 422 `transform_budget_exceeded` on a request, 500 with that code on a response.
   */
  #failed(err: unknown, req: RequestEnvelope, res: ResponseEnvelope | undefined): void {
    const direction = res ? "response" : "request";
    const message = `transform ${this.name} (${this.#spec.specPath}) failed on the ${direction}: ${
      (err as Error).message
    }`;
    // The body could not be had at all (the memory budget, an answer that broke off or timed
    // out, a client that left or trickled): that error whatever fail_on_error says, since
    // there is nothing to pass on unchanged.
    if (
      err instanceof GatewayError && (err.status >= 500 || err.status === 408 || err.status === 499)
    ) {
      throw err;
    }
    if (this.#opts.fail_on_error) {
      // A body the codec could not parse keeps its own 4xx; anything else is a transform failure.
      if (err instanceof GatewayError) throw err;
      if (err instanceof JoltBudgetExceeded) {
        throw new GatewayError(res ? 500 : 422, "transform_budget_exceeded", message);
      }
      throw new GatewayError(500, "transform_failed", message);
    }
    this.#logger.warn("transform failed; data passes unchanged (fail_on_error = false)", {
      middleware: this.name,
      request_id: req.id,
      error: message,
    });
  }

  /** Stop watching the spec file. */
  close(): void {
    this.#spec.close();
  }
}

/** The context a transform sees with `input = "envelope"`. */
export function context(
  req: RequestEnvelope,
  res?: ResponseEnvelope,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    request: {
      method: req.method,
      path: req.path,
      headers: headersToObject(req.readHeaders),
      query: queryToObject(req.query),
      metadata: req.metadata,
    },
  };
  if (res) out.response = { status: res.status, headers: headersToObject(res.headers) };
  return out;
}

/** The spec source of a build: the one it was given (cloud downloads), else `transforms_path`. */
export function transformSource(ctx: BuildContext): TransformSource {
  return ctx.transformSource ?? new FileTransformSource(ctx.config.transforms_path);
}

/** Build a `transform` middleware: loads, compiles and (unless validating) watches its spec. */
export async function createTransformMiddleware(
  config: MiddlewareConfig,
  ctx: BuildContext,
): Promise<Middleware> {
  const opts = readOptions(config);
  const source = transformSource(ctx);
  const spec = await SpecFile.load(source, opts.spec_path, { maxSteps: opts.max_steps });
  const logger = ctx.logger.child({ middleware: config.name });
  if (!ctx.validateOnly) spec.watch(source, logger);
  return new TransformMiddleware(config.name, opts, spec, logger);
}
