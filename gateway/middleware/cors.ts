/**
 * The `cors` middleware: Cross-Origin Resource Sharing for browser clients (the Fetch standard's
 * CORS protocol). A preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered here,
 * 204 with the allowed methods and headers, or 403 `cors_preflight_denied` naming what is not
 * allowed; no backend sees it. Other requests from an allowed origin get
 * `Access-Control-Allow-Origin` (and credentials and exposed headers when configured) on their
 * response. A request from an origin not listed goes on without those headers, so the browser
 * keeps the answer from the page. List `cors` before authentication middleware: preflights carry
 * no credentials.
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import { type RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { Middleware } from "../pipeline/mod.ts";

/** Options of `cors` (after schema checks). */
export interface CorsOptions {
  allow_origins: string[];
  allow_methods: string[];
  allow_headers: string[];
  expose_headers: string[];
  allow_credentials: boolean;
  max_age_secs: number;
}

/** Request headers a browser may always send (CORS-safelisted), never asked about. */
const SAFELISTED = new Set(["accept", "accept-language", "content-language", "content-type"]);

/** The CORS middleware. */
export class CorsMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: true };
  readonly #anyOrigin: boolean;
  readonly #origins: Set<string>;
  readonly #methods: Set<string>;
  readonly #headers: Set<string>;
  readonly #options: CorsOptions;

  constructor(name: string, options: CorsOptions) {
    this.name = name;
    this.#options = options;
    this.#anyOrigin = options.allow_origins.includes("*");
    this.#origins = new Set(options.allow_origins.map((o) => o.toLowerCase()));
    this.#methods = new Set(options.allow_methods.map((m) => m.toUpperCase()));
    this.#headers = new Set(options.allow_headers.map((h) => h.toLowerCase()));
  }

  #allowed(origin: string): boolean {
    return this.#anyOrigin || this.#origins.has(origin.toLowerCase());
  }

  /** The Access-Control-Allow-Origin value for an allowed origin. */
  #allowOrigin(origin: string): string {
    // With credentials the origin must be named; `*` is only for anonymous requests.
    return this.#anyOrigin && !this.#options.allow_credentials ? "*" : origin;
  }

  onRequest(req: RequestEnvelope): ResponseEnvelope | void {
    const origin = req.readHeaders.get("origin");
    const method = req.readHeaders.get("access-control-request-method");
    if (req.method !== "OPTIONS" || origin === null || method === null) return;
    const refused = (why: string) =>
      new GatewayError(403, "cors_preflight_denied", `CORS preflight refused: ${why}`);
    if (!this.#allowed(origin)) throw refused(`origin ${origin} is not allowed`);
    if (!this.#methods.has(method.toUpperCase())) throw refused(`method ${method} is not allowed`);
    const asked = (req.readHeaders.get("access-control-request-headers") ?? "")
      .split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== "");
    const extra = asked.filter((h) => !SAFELISTED.has(h) && !this.#headers.has(h));
    if (extra.length) throw refused(`header ${extra.join(", ")} is not allowed`);
    const headers = new Headers({
      "access-control-allow-origin": this.#allowOrigin(origin),
      "access-control-allow-methods": [...this.#methods].join(", "),
      "access-control-max-age": String(this.#options.max_age_secs),
      vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    });
    if (asked.length) headers.set("access-control-allow-headers", asked.join(", "));
    if (this.#options.allow_credentials) headers.set("access-control-allow-credentials", "true");
    return new ResponseEnvelope(204, headers);
  }

  onResponse(res: ResponseEnvelope, req: RequestEnvelope): void {
    const origin = req.readHeaders.get("origin");
    if (origin === null) return;
    const h = res.headers;
    if (h.has("access-control-allow-methods")) return; // our own preflight answer
    h.append("vary", "Origin");
    if (!this.#allowed(origin)) return;
    h.set("access-control-allow-origin", this.#allowOrigin(origin));
    if (this.#options.allow_credentials) h.set("access-control-allow-credentials", "true");
    if (this.#options.expose_headers.length) {
      h.set("access-control-expose-headers", this.#options.expose_headers.join(", "));
    }
  }
}

/** Build a `cors` middleware (options already checked by the config schema). */
export function createCorsMiddleware(config: MiddlewareConfig): Middleware {
  return new CorsMiddleware(config.name, config.options as unknown as CorsOptions);
}
