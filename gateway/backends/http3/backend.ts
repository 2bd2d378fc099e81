/**
 * The `http3` backend: forwards the envelope over HTTP/3 (QUIC, TLS 1.3 always) to `host:port`,
 * below `base_path`, trusting `ca_cert_path` in addition to the system roots. One pooled
 * connection per target carries concurrent requests; a lost connection is replaced. Errors map as
 * in the `http` backend: 502 `backend_unavailable`, 504 `backend_timeout` (after the backend's
 * `timeout_secs` or the option `timeout_secs`, whichever is shorter), JSON bodies.
 */
import {
  type HeaderField,
  loadUpstreamAccess,
  sendWithCredentials,
  type UpstreamCredentials,
} from "../credentials/mod.ts";
import type { BackendConfig } from "../../../shared/gateway_config/mod.ts";
import { Body, type RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { Http3RequestError } from "../../http3/mod.ts";
import type { Backend, BackendCall, BuildContext } from "../../pipeline/mod.ts";
import { joinUrl, type Target, TargetPool } from "../../pipeline/mod.ts";
import { sendWithFailover } from "../failover.ts";
import { H3ConnectionSlot } from "./pool.ts";
import { upstreamHeaders, withoutHopByHop } from "../proxy_headers.ts";

/** Parse an `https://host:port/path` target URL. */
function parseTarget(url: string, what: string): { host: string; port: number; path: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`${what}: invalid URL ${JSON.stringify(url)}`);
  }
  if (u.protocol !== "https:") throw new Error(`${what}: an http3 target URL must be https`);
  const host = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
  return { host, port: u.port ? Number(u.port) : 443, path: u.pathname.replace(/\/$/, "") };
}

/** Forwards requests over HTTP/3 with one multiplexed QUIC connection per target. */
export class Http3Backend implements Backend {
  readonly name: string;
  readonly config: BackendConfig;
  readonly pool: TargetPool;
  readonly #slots = new Map<Target, H3ConnectionSlot>();
  readonly #timeoutMs: number;

  /** Outbound credentials (`auth`), when the upstream asks for some. */
  readonly #credentials: UpstreamCredentials | undefined;

  constructor(
    config: BackendConfig,
    caCerts: string[] | undefined,
    ctx: BuildContext,
    credentials?: UpstreamCredentials,
  ) {
    this.name = config.name;
    this.config = config;
    this.#credentials = credentials;
    const o = config.options;
    const targets = config.targets.length
      ? config.targets.map((t) => ({ name: t, url: ctx.config.targets[t].url }))
      : [{
        name: config.name,
        url: `https://${bracket(String(o.host))}:${Number(o.port ?? 443)}${
          String(o.base_path ?? "").replace(/\/$/, "")
        }`,
      }];
    this.pool = new TargetPool(config.name, targets, config);
    for (const t of this.pool.targets) {
      const { host, port } = parseTarget(t.url, `backend ${config.name}`);
      const serverName = o.server_name as string | undefined;
      this.#slots.set(t, new H3ConnectionSlot({ host, port, caCerts, serverName }));
    }
    const optionTimeout = Number(o.timeout_secs ?? 30) * 1000;
    this.#timeoutMs = Math.min(optionTimeout, config.timeout_secs * 1000);
  }

  /** Connections opened per target so far (tests and diagnostics). */
  connectionsOpened(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [t, slot] of this.#slots) out[t.name] = slot.opened;
    return out;
  }

  /** Forward the request; retry requests that were not processed, or idempotent replayable ones. */
  invoke(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
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

  async #invoke(
    req: RequestEnvelope,
    call: BackendCall,
    auth: readonly HeaderField[] | undefined,
  ): Promise<ResponseEnvelope> {
    const signal = this.#signal(call);
    try {
      return await sendWithFailover({
        backend: this.name,
        pool: this.pool,
        retries: this.config.retries,
        timeoutSecs: this.#timeoutMs / 1000,
        req,
        signal: signal.signal,
        logger: call.logger,
        send: (target, body) => this.#send(target, req, body, signal.signal, auth),
        // A request the peer refused before processing it may go out again whatever its method.
        unprocessed: (err) => err instanceof Http3RequestError && !err.processed,
      });
    } finally {
      signal.done();
    }
  }

  /** The call's signal, with our own timer when the option timeout is the shorter one. */
  #signal(call: BackendCall): { signal: AbortSignal; done(): void } {
    if (this.#timeoutMs >= this.config.timeout_secs * 1000) {
      return { signal: call.signal, done: () => {} };
    }
    const controller = new AbortController();
    const outer = call.signal;
    const onAbort = () => controller.abort(outer.reason);
    if (outer.aborted) onAbort();
    else outer.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(
      () => controller.abort(new DOMException("backend timeout", "TimeoutError")),
      this.#timeoutMs,
    );
    return {
      signal: controller.signal,
      done: () => {
        clearTimeout(timer);
        outer.removeEventListener("abort", onAbort);
      },
    };
  }

  async #send(
    target: Target,
    req: RequestEnvelope,
    body: ReturnType<Body["forwardable"]>,
    signal: AbortSignal,
    auth: readonly HeaderField[] | undefined,
  ): Promise<ResponseEnvelope> {
    const slot = this.#slots.get(target)!;
    const { path: basePath } = parseTarget(target.url, `backend ${this.name}`);
    let path = joinUrl(basePath, req.path);
    path += req.queryString();
    const headers = upstreamHeaders(req.readHeaders, req);
    if (req.body.contentType) headers.set("content-type", req.body.contentType);
    if (auth) { for (const [name, value] of auth) headers.set(name, value); }
    const hasBody = body !== null && req.method !== "GET" && req.method !== "HEAD";
    if (hasBody && body instanceof Uint8Array) headers.set("content-length", String(body.length));
    else if (hasBody && req.body.knownLength !== null) {
      headers.set("content-length", String(req.body.knownLength));
    }
    const client = await slot.get(signal);
    const port = slot.address.port;
    let res;
    try {
      res = await client.request({
        method: req.method,
        authority: port === 443
          ? bracket(slot.address.host)
          : `${bracket(slot.address.host)}:${port}`,
        path,
        headers,
        body: hasBody ? body : null,
        signal,
      });
    } catch (err) {
      if (err instanceof Http3RequestError && client.session.isClosed) slot.reset(client);
      throw err;
    }
    const resHeaders = withoutHopByHop(res.headers);
    const length = res.headers.get("content-length");
    const resBody = new Body(
      res.body,
      res.headers.get("content-type"),
      req.body.limits,
      length ? Number(length) : null,
      false,
    );
    return new ResponseEnvelope(res.status, resHeaders, resBody, this.name);
  }

  /** Close the pooled connections. */
  close(): void {
    this.pool.close();
    for (const slot of this.#slots.values()) slot.close();
    this.#credentials?.close();
  }
}

function bracket(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Build an `http3` backend (reads `ca_cert_path`, relative to the config file). */
export async function createHttp3Backend(
  config: BackendConfig,
  ctx: BuildContext,
): Promise<Backend> {
  const caPath = config.options.ca_cert_path as string | undefined;
  let caCerts: string[] | undefined;
  if (caPath) {
    const path = caPath.startsWith("/") ? caPath : `${ctx.baseDir}/${caPath}`;
    try {
      caCerts = [await Deno.readTextFile(path)];
    } catch (err) {
      throw new Error(
        `backend ${config.name}: cannot read ca_cert_path ${path}: ${(err as Error).message}`,
      );
    }
  }
  const { credentials } = await loadUpstreamAccess(config, ctx.baseDir);
  return new Http3Backend(config, caCerts, ctx, credentials);
}
