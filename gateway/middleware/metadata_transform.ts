/**
 * The `metadata_transform` middleware: a JOLT spec over the request metadata (the string
 * key-values used for routing, e.g. by a backend's `match` table). The output must be a flat
 * object of strings; anything else is an error naming the key.
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { BuildContext, Middleware } from "../pipeline/mod.ts";
import { SpecFile } from "./spec_file.ts";
import { toMetadata, transformSource } from "./transform.ts";

/** The metadata transform middleware (requests only: responses carry no metadata). */
export class MetadataTransformMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: false };
  readonly #spec: SpecFile;
  readonly #failOnError: boolean;
  readonly #logger: Logger;

  constructor(name: string, spec: SpecFile, failOnError: boolean, logger: Logger) {
    this.name = name;
    this.#spec = spec;
    this.#failOnError = failOnError;
    this.#logger = logger;
  }

  /** Rewrite the request metadata. */
  onRequest(req: RequestEnvelope): Promise<void> {
    try {
      const output = this.#spec.spec.apply(req.metadata);
      req.metadata = toMetadata(output, "metadata_transform output");
    } catch (err) {
      const message = `metadata_transform ${this.name} (${this.#spec.specPath}) failed: ${
        (err as Error).message
      }`;
      if (this.#failOnError) throw new GatewayError(500, "transform_failed", message);
      this.#logger.warn("metadata transform failed; metadata unchanged (fail_on_error = false)", {
        middleware: this.name,
        request_id: req.id,
        error: message,
      });
    }
    return Promise.resolve();
  }

  /** Stop watching the spec file. */
  close(): void {
    this.#spec.close();
  }
}

/** Build a `metadata_transform` middleware. */
export async function createMetadataTransformMiddleware(
  config: MiddlewareConfig,
  ctx: BuildContext,
): Promise<Middleware> {
  const apply = config.options.apply ?? "left";
  if (apply !== "left") {
    throw new Error(
      `metadata_transform acts on request metadata only: options.apply must be "left", not ${
        JSON.stringify(apply)
      }`,
    );
  }
  const source = transformSource(ctx);
  const maxSteps = config.options.max_steps;
  const spec = await SpecFile.load(source, String(config.options.spec_path), {
    maxSteps: maxSteps === undefined ? undefined : Number(maxSteps),
  });
  const logger = ctx.logger.child({ middleware: config.name });
  if (!ctx.validateOnly) spec.watch(source, logger);
  return new MetadataTransformMiddleware(
    config.name,
    spec,
    config.options.fail_on_error !== false,
    logger,
  );
}
