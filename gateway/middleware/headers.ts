/**
 * The `headers` middleware: set and remove request headers on the way to the backend (also from
 * request metadata, e.g. `auth.subject` as `X-Authenticated-User`) and response headers on the
 * way back (strip `Server`, add security headers). Framing and hop-by-hop headers cannot be
 * touched (the config schema refuses them): the gateway owns those.
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type { Middleware } from "../pipeline/mod.ts";

/** Options of `headers` (after schema checks). */
export interface HeadersOptions {
  request_set: Record<string, string>;
  request_remove: string[];
  request_from_metadata: Record<string, string>;
  response_set: Record<string, string>;
  response_remove: string[];
}

/** The header rules middleware. */
export class HeadersMiddleware implements Middleware {
  readonly name: string;
  readonly acts: { request: boolean; response: boolean };
  readonly #o: HeadersOptions;

  constructor(name: string, options: HeadersOptions) {
    this.name = name;
    this.#o = options;
    const any = (t: Record<string, string> | string[]) => Object.keys(t).length > 0;
    this.acts = {
      request: any(options.request_set) || any(options.request_remove) ||
        any(options.request_from_metadata),
      response: any(options.response_set) || any(options.response_remove),
    };
  }

  onRequest(req: RequestEnvelope): void {
    const h = req.headers;
    for (const name of this.#o.request_remove) h.delete(name);
    for (const [name, value] of Object.entries(this.#o.request_set)) h.set(name, value);
    for (const [name, key] of Object.entries(this.#o.request_from_metadata)) {
      // A value from metadata replaces whatever the client sent under that name, or removes it.
      const value = req.metadata[key];
      if (value !== undefined && !/[\r\n\0]/.test(value)) h.set(name, value);
      else h.delete(name);
    }
  }

  onResponse(res: ResponseEnvelope): void {
    const h = res.headers;
    for (const name of this.#o.response_remove) h.delete(name);
    for (const [name, value] of Object.entries(this.#o.response_set)) h.set(name, value);
  }
}

/** Build a `headers` middleware (options already checked by the config schema). */
export function createHeadersMiddleware(config: MiddlewareConfig): Middleware {
  return new HeadersMiddleware(config.name, config.options as unknown as HeadersOptions);
}
