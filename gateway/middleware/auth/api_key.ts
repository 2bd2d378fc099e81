/**
 * The `api_key` middleware: a key in a header (default `X-API-Key`) or, when configured, a query
 * parameter, matched against the SHA-256 hashes in the configuration; the name of the matching key
 * becomes `auth.subject`. Keys never appear in the configuration, the log or the answer. The key
 * is removed before the request goes on unless `forward_credentials` is set.
 */
import type { MiddlewareConfig } from "../../../shared/gateway_config/mod.ts";
import type { RequestEnvelope } from "../../envelope.ts";
import type { Middleware } from "../../pipeline/mod.ts";
import { MAX_CREDENTIAL_LENGTH, sha256Hex } from "./credentials.ts";
import { challenge, unauthorized } from "./failures.ts";
import { setIdentity } from "./identity.ts";

/** Options of `api_key` (after schema checks). */
export interface ApiKeyOptions {
  header: string;
  query_param?: string;
  /** Key name -> `sha256:<hex>` of the key. */
  keys: Record<string, string>;
  forward_credentials: boolean;
}

/** The API key middleware. */
export class ApiKeyMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: false };
  readonly #header: string;
  readonly #queryParam: string | undefined;
  /** Hex digest -> key name. */
  readonly #names = new Map<string, string>();
  readonly #forward: boolean;
  readonly #challenge: string;

  constructor(name: string, options: ApiKeyOptions) {
    this.name = name;
    this.#header = options.header.toLowerCase();
    this.#queryParam = options.query_param;
    for (const [keyName, digest] of Object.entries(options.keys)) {
      this.#names.set(digest.slice("sha256:".length).toLowerCase(), keyName);
    }
    this.#forward = options.forward_credentials;
    this.#challenge = challenge("ApiKey", { header: options.header });
  }

  onRequest(req: RequestEnvelope): void {
    let key = req.readHeaders.get(this.#header);
    const fromQuery = key === null && this.#queryParam !== undefined;
    if (fromQuery) key = req.query.get(this.#queryParam!);
    if (key === null || key === "") {
      const where = this.#queryParam
        ? `the ${this.#header} header or the ${this.#queryParam} query parameter`
        : `the ${this.#header} header`;
      throw unauthorized(
        "missing_credentials",
        `an API key is required in ${where}`,
        this.#challenge,
      );
    }
    const subject = key.length <= MAX_CREDENTIAL_LENGTH
      ? this.#names.get(sha256Hex(key))
      : undefined;
    if (subject === undefined) {
      throw unauthorized("invalid_credentials", "the API key is not valid", this.#challenge);
    }
    if (!this.#forward) {
      if (fromQuery) req.query.delete(this.#queryParam!);
      else req.headers.delete(this.#header);
    }
    setIdentity(req, { method: "api_key", subject });
  }
}

/** Build an `api_key` middleware (options already checked by the config schema). */
export function createApiKeyMiddleware(config: MiddlewareConfig): Middleware {
  return new ApiKeyMiddleware(config.name, config.options as unknown as ApiKeyOptions);
}
