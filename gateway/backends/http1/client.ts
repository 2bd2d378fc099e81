/** The pooled HTTP/1.1 client: connection reuse, the stale-connection retry, close. */

import { connect } from "./connect.ts";
import { Http1Error } from "./errors.ts";
import { Exchange, type ExchangeOptions, type Http1Response, toFetchResponse } from "./exchange.ts";
import { buildRequestHead, type RequestHead } from "./head.ts";
import { Pool } from "./pool.ts";
import type { Http1RequestInit } from "./request.ts";

/** Options of {@link Http1Client}. */
export interface Http1ClientOptions {
  /** Idle keep-alive sockets kept per origin (default 64). */
  maxIdlePerOrigin?: number;
  /** Idle sockets are closed after this many milliseconds (default 30 000). */
  idleTimeoutMs?: number;
  /** Largest response head accepted, in bytes (default 64 KiB). */
  maxHeaderBytes?: number;
  /** Extra PEM root certificates for https upstreams. */
  caCerts?: string[];
  /** PEM client certificate chain and key presented to https upstreams (mutual TLS). */
  clientCert?: { cert: string; key: string };
  /** Name https upstreams' certificates are checked against, instead of the URL's host. */
  serverName?: string;
  /** Limit for TCP connect plus TLS handshake, in milliseconds (default 10 000). */
  connectTimeoutMs?: number;
}

/** Counters of a client, for tests and metrics. */
export interface Http1ClientStats {
  /** Connections opened. */
  connects: number;
  /** Requests sent again on a fresh connection after a reused one failed before answering. */
  retries: number;
}

function positive(name: string, value: number | undefined, fallback: number, min = 1): number {
  const result = value ?? fallback;
  if (!Number.isFinite(result) || result < min) {
    throw new RangeError(`${name} must be a number >= ${min}, got ${value}`);
  }
  return result;
}

/** A pooled HTTP/1.1 client for one backend, over `Deno.connect` (and `Deno.startTls` for https). */
export class Http1Client {
  readonly #pool: Pool;
  readonly #connectTimeoutMs: number;
  readonly #caCerts: string[] | undefined;
  readonly #clientCert: { cert: string; key: string } | undefined;
  readonly #serverName: string | undefined;
  readonly #exchange: ExchangeOptions;
  #closed = false;
  /** Counters since the client was made. */
  readonly stats: Http1ClientStats = { connects: 0, retries: 0 };

  constructor(options: Http1ClientOptions = {}) {
    this.#pool = new Pool(
      positive("maxIdlePerOrigin", options.maxIdlePerOrigin, 64, 0),
      positive("idleTimeoutMs", options.idleTimeoutMs, 30_000),
    );
    this.#connectTimeoutMs = positive("connectTimeoutMs", options.connectTimeoutMs, 10_000);
    this.#caCerts = options.caCerts;
    this.#clientCert = options.clientCert;
    this.#serverName = options.serverName;
    this.#exchange = {
      maxHeaderBytes: positive("maxHeaderBytes", options.maxHeaderBytes, 64 * 1024, 64),
      release: (conn) => this.#pool.put(conn),
      // A reused socket the server closed meanwhile, nothing came back and the body can be sent
      // again (nginx closes after keepalive_requests or keepalive_timeout): once, on a new one.
      retry: (url, origin, init, head, error) => {
        if (this.#closed) throw error;
        this.stats.retries++;
        return this.#sendFresh(url, origin, init, head);
      },
    };
  }

  /** Idle pooled connections (all origins). */
  get idleConnections(): number {
    return this.#pool.size;
  }

  /** Sends a request; resolves with a fetch-style Response once its head is parsed. */
  request(url: URL, init: Http1RequestInit): Promise<Response> {
    // then() rather than an async wrapper: one promise, no frame.
    return this.send(url, init).then(toFetchResponse);
  }

  /**
   * Sends a request; resolves once the response head is parsed, the body streams after (or is
   * already complete). The raw form a proxy forwards without building a Response.
   */
  send(url: URL, init: Http1RequestInit): Promise<Http1Response> {
    let head: RequestHead;
    let origin: string;
    try {
      if (init.signal?.aborted) throw init.signal.reason;
      if (this.#closed) throw new Http1Error("the HTTP/1.1 client is closed", "client_closed");
      // The href is the URL's own string; protocol and origin would each be a new one.
      const href = url.href;
      const https = href.startsWith("https:");
      if (!https && !href.startsWith("http:")) {
        throw new Http1Error(`unsupported URL scheme ${url.protocol}`, "invalid_request");
      }
      const host = url.host;
      head = buildRequestHead(init.method, url, init.headers, init.body, host);
      // The pool's key: the host alone for http, so the usual case builds no string.
      origin = https ? "https://" + host : host;
    } catch (error) {
      return Promise.reject(error);
    }
    const conn = this.#pool.take(origin);
    // A pooled socket: no frame of ours around the exchange (it retries through the options).
    if (conn !== undefined) {
      return new Exchange(conn, url, origin, init, head, true, this.#exchange).run();
    }
    return this.#sendFresh(url, origin, init, head);
  }

  /** Sends on a new connection. */
  async #sendFresh(
    url: URL,
    origin: string,
    init: Http1RequestInit,
    head: RequestHead,
  ): Promise<Http1Response> {
    const conn = await connect(url, origin, {
      caCerts: this.#caCerts,
      clientCert: this.#clientCert,
      serverName: this.#serverName,
      timeoutMs: this.#connectTimeoutMs,
    }, init.signal);
    this.stats.connects++;
    return await new Exchange(conn, url, origin, init, head, false, this.#exchange).run();
  }

  /** Closes idle sockets and refuses new requests; in-flight ones finish and close their sockets. */
  close(): Promise<void> {
    this.#closed = true;
    return this.#pool.close();
  }

  /** Same as {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
