/**
 * The `http` backend: forwards the envelope to a base URL (or one of the backend's targets),
 * streaming the body both ways when nobody read it. Also the base of `fhir` and `dicomweb`.
 */
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import { Body, type BodySource, type RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { Backend, BackendCall, BuildContext } from "../pipeline/mod.ts";
import { callAbortOf, joinUrl, type Target, TargetPool } from "../pipeline/mod.ts";
import {
  type HeaderField,
  loadUpstreamAccess,
  sendWithCredentials,
  type UpstreamAccess,
  type UpstreamCredentials,
} from "./credentials/mod.ts";
import { type AbortState, type FailoverOptions, sendWithFailover } from "./failover.ts";
import { Http1Client, Http1Error, type Http1Response } from "./http1/mod.ts";
import { forwardedHeaderView, upstreamHeaders, withoutHopByHop } from "./proxy_headers.ts";

/** Checks a response before it is returned (the fhir backend validates content types). */
export type ResponseCheck = (res: ResponseEnvelope, backend: string) => void;

/** Forwards requests with our pooled HTTP/1.1 client, or with fetch (`upstream_protocol = "auto"`). */
export class HttpBackend implements Backend {
  readonly name: string;
  readonly config: BackendConfig;
  readonly pool: TargetPool;
  readonly #check?: ResponseCheck;
  /** Our pooled HTTP/1.1 client, or undefined to use fetch (`upstream_protocol = "auto"`). */
  readonly #http1: Http1Client | undefined;

  /** Outbound credentials (`auth`), when the upstream asks for some. */
  readonly #credentials: UpstreamCredentials | undefined;
  /** fetch's client with the backend's TLS material (`upstream_protocol = "auto"`). */
  readonly #fetchClient: Deno.HttpClient | undefined;
  /** When the client certificate expires, if there is one. */
  readonly #certExpiresAt: number | undefined;

  constructor(
    config: BackendConfig,
    ctx: BuildContext,
    check?: ResponseCheck,
    access: UpstreamAccess = {},
  ) {
    this.name = config.name;
    this.config = config;
    this.#check = check;
    this.#credentials = access.credentials;
    const base = config.options.base_url as string | undefined;
    const targets = config.targets.length
      ? config.targets.map((t) => ({ name: t, url: ctx.config.targets[t].url }))
      : [{ name: config.name, url: base ?? "" }];
    this.pool = new TargetPool(config.name, targets, config);
    const tls = access.tls;
    this.#certExpiresAt = tls?.clientCertExpiresAt;
    if (config.options.upstream_protocol === "auto") {
      this.#fetchClient = tls
        ? Deno.createHttpClient({ caCerts: tls.caCerts, ...(tls.clientCert ?? {}) })
        : undefined;
    } else {
      this.#http1 = new Http1Client({
        caCerts: tls?.caCerts,
        clientCert: tls?.clientCert,
        serverName: tls?.serverName,
      });
    }
    if (!ctx.validateOnly) {
      this.pool.startHealthChecks(config, ctx.logger.child({ backend: config.name }));
    }
  }

  /**
   * Forward the request; retry idempotent requests with a replayable body on connection errors.
   * With credentials, a 401 drops them and an idempotent request that can be sent again is, once,
   * with new ones.
   */
  invoke(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    if (this.#certExpiresAt !== undefined && Date.now() >= this.#certExpiresAt) {
      // The upstream would refuse the handshake: say why instead of passing on its 400.
      return Promise.reject(
        new GatewayError(
          502,
          "backend_unavailable",
          `backend ${this.name}: its client certificate (client_cert_path) expired on ${
            new Date(this.#certExpiresAt).toISOString()
          }`,
        ),
      );
    }
    // Without credentials: no closure per request on this path.
    if (!this.#credentials) return this.#invoke(req, call, undefined);
    return sendWithCredentials(
      this.#credentials,
      req,
      call,
      this.name,
      (fields) => this.#invoke(req, call, fields),
    );
  }

  #invoke(
    req: RequestEnvelope,
    call: BackendCall,
    auth: readonly HeaderField[] | undefined,
  ): Promise<ResponseEnvelope> {
    const sent = sendWithFailover(new Forwarding(this, req, call, auth, this.#http1 !== undefined));
    const check = this.#check;
    if (check === undefined) return sent;
    return sent.then((res) => {
      check(res, this.name);
      return res;
    });
  }

  /**
   * One attempt of {@link Forwarding}: `req` to `target`. Our client's answer comes raw; the
   * failover loop has {@link answerOf} make its envelope (no `then` of ours per attempt).
   */
  forwardTo(
    target: Target,
    req: RequestEnvelope,
    body: ReturnType<Body["forwardable"]>,
    call: BackendCall,
    auth: readonly HeaderField[] | undefined,
  ): Promise<Http1Response | ResponseEnvelope> {
    let url = joinUrl(target.url, req.path);
    url += req.queryString();
    const hasBody = body !== null && req.method !== "GET" && req.method !== "HEAD";
    if (!this.#http1) return this.#fetch(url, req, body, hasBody, call.signal, auth);
    // No async frame or then() of ours around the client's exchange.
    return this.#http1.send(new URL(url), {
      method: req.method,
      // The client's untouched stream keeps the client's framing: its Content-Length goes on
      // (the server already holds the body to it), so no upstream or WAF sees chunked
      // framing the client never sent. Bytes are framed by their own length.
      headers: forwardedHeaderView(
        req.readHeaders,
        req,
        req.body.contentType,
        body instanceof ReadableStream ? req.body.knownLength : null,
        auth,
      ),
      body: hasBody ? body : null,
      // The executor's call is its own abort hook: no AbortSignal built for our client.
      signal: callAbortOf(call),
    });
  }

  /** The envelope of our client's answer to `req`. */
  answerOf(raw: Http1Response, req: RequestEnvelope): ResponseEnvelope {
    // Our client already left hop-by-hop fields out and lower-cased the names: the fields go
    // on as they are.
    let contentType: string | null = null;
    let length: string | null = null;
    const fields = raw.fields;
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i];
      if (name === "content-type") contentType = fields[i + 1];
      else if (name === "content-length") length = fields[i + 1];
    }
    const resBody = new Body(
      raw.body,
      contentType,
      req.body.limits,
      length ? Number(length) : null,
      false,
    );
    return ResponseEnvelope.fromFields(raw.status, fields, resBody, this.name);
  }

  /** One attempt with the runtime's fetch (`upstream_protocol = "auto"`). */
  async #fetch(
    url: string,
    req: RequestEnvelope,
    body: ReturnType<Body["forwardable"]>,
    hasBody: boolean,
    signal: AbortSignal,
    auth: readonly HeaderField[] | undefined,
  ): Promise<ResponseEnvelope> {
    const headers = upstreamHeaders(req.readHeaders, req);
    if (auth) { for (const [name, value] of auth) headers.set(name, value); }
    if (req.body.contentType) headers.set("content-type", req.body.contentType);
    // fetch decompresses gzip/br bodies but keeps Content-Encoding: ask for identity so what
    // reaches the client is what the headers say.
    headers.set("accept-encoding", "identity");
    const res = await fetch(url, {
      method: req.method,
      headers,
      body: hasBody ? body as BodyInit : undefined,
      signal,
      redirect: "manual",
      ...(this.#fetchClient ? { client: this.#fetchClient } : {}),
    });
    const length = res.headers.get("content-length");
    const resBody = new Body(
      res.body,
      res.headers.get("content-type"),
      req.body.limits,
      length ? Number(length) : null,
      false,
    );
    return new ResponseEnvelope(res.status, withoutHopByHop(res.headers), resBody, this.name);
  }

  /** Stop health checks, close pooled connections. */
  async close(): Promise<void> {
    this.pool.close();
    await this.#http1?.close();
    this.#credentials?.close();
    this.#fetchClient?.close();
  }
}

/** Build an `http` backend (reads its credential and TLS files). */
export async function createHttpBackend(
  config: BackendConfig,
  ctx: BuildContext,
): Promise<Backend> {
  return new HttpBackend(config, ctx, undefined, await loadUpstreamAccess(config, ctx.baseDir));
}

/**
 * One forwarded request as the failover loop sees it: a class rather than an options literal,
 * so a request costs one object and no closures.
 */
class Forwarding implements FailoverOptions<ResponseEnvelope, Http1Response | ResponseEnvelope> {
  readonly backend: string;
  readonly pool: TargetPool;
  readonly retries: number;
  readonly timeoutSecs: number;
  readonly req: RequestEnvelope;
  readonly #owner: HttpBackend;
  readonly #call: BackendCall;
  readonly #auth: readonly HeaderField[] | undefined;
  readonly #ourClient: boolean;

  constructor(
    owner: HttpBackend,
    req: RequestEnvelope,
    call: BackendCall,
    auth: readonly HeaderField[] | undefined,
    ourClient: boolean,
  ) {
    this.#owner = owner;
    this.backend = owner.name;
    this.pool = owner.pool;
    this.retries = owner.config.retries;
    this.timeoutSecs = owner.config.timeout_secs;
    this.req = req;
    this.#call = call;
    this.#auth = auth;
    this.#ourClient = ourClient;
  }

  /** Read only when an attempt failed (to tell a timeout or a client gone from the rest). */
  get signal(): AbortState {
    return callAbortOf(this.#call);
  }

  get logger(): Logger {
    return this.#call.logger;
  }

  send(target: Target, body: BodySource): Promise<Http1Response | ResponseEnvelope> {
    return this.#owner.forwardTo(target, this.req, body, this.#call, this.#auth);
  }

  /** An attempt's answer: our client's raw one becomes an envelope (fetch's already is). */
  answer(raw: Http1Response | ResponseEnvelope): ResponseEnvelope {
    return raw instanceof ResponseEnvelope ? raw : this.#owner.answerOf(raw, this.req);
  }

  /**
   * Our client reports every upstream failure as an Http1Error; anything else (or a body that
   * broke its own Content-Length) came from reading the client's body, and must not count
   * against the target's health.
   */
  clientFault(err: unknown): GatewayError | undefined {
    return this.#ourClient && !(err instanceof Http1Error && err.code !== "body_length")
      ? new GatewayError(
        400,
        "request_body_failed",
        `the request body could not be read: ${(err as Error)?.message ?? String(err)}`,
      )
      : undefined;
  }
}
