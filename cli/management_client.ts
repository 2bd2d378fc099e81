/**
 * The gateway management API of one registered instance: `info`, `pipelines`, `routes`, `token`
 * and `update` under the prefix, `POST /api/reload` outside it. Errors arrive as
 * `{"error":{"code","message","request_id"}}`.
 */
import { type Env, processEnv } from "./env.ts";
import { CliError } from "./errors.ts";
import { managementTokenFor, tokenHint } from "./management_token.ts";
import { type HttpClient, type HttpResponse, jsonObject } from "./http.ts";
import {
  describeInstance,
  hostPort,
  type Instance,
  instanceOrigin,
  prefixedUrl,
} from "./instances.ts";

/** A management API answer that is not 2xx. */
export class ManagementError extends CliError {
  /** The answer. */
  readonly response: HttpResponse;

  constructor(message: string, response: HttpResponse, hint?: string) {
    super(message, { hint });
    this.response = response;
  }
}

/** Client of one instance's management API. */
export class ManagementClient {
  readonly instance: Instance;
  #http: HttpClient;
  #env: Env;
  #token: Promise<string | undefined> | undefined;

  constructor(http: HttpClient, instance: Instance, env: Env = processEnv) {
    this.#http = http;
    this.instance = instance;
    this.#env = env;
  }

  /** The peer name in messages. */
  get peer(): string {
    return `gateway ${describeInstance(this.instance)}`;
  }

  /** Sends a request to `url`; a connection failure gets the port-mismatch hint. */
  async send(method: string, url: string, json?: unknown): Promise<HttpResponse> {
    const token = await (this.#token ??= managementTokenFor(this.instance, this.#env));
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    // The gateway takes body-carrying methods only as JSON (an empty object when there is none).
    const body = json === undefined && method !== "GET" && method !== "HEAD" ? {} : json;
    try {
      return await this.#http.send({ method, url, json: body, headers, peer: this.peer });
    } catch (err) {
      if (err instanceof CliError && /connection refused/.test(err.message)) {
        throw new CliError(err.message, {
          hint:
            `Is the gateway running, with its management API on ${
              hostPort(this.instance.ip, this.instance.port)
            }? The gateway listens on port 9090 by default, gwcli gateway:add registers 8081 ` +
            "by default (see docs/management-api.md).",
        });
      }
      throw err;
    }
  }

  /** GET under the prefix; anything but 200 is an error. */
  async #get(route: string): Promise<Record<string, unknown>> {
    const res = await this.send("GET", prefixedUrl(this.instance, route));
    if (res.status !== 200) throw this.failure(`GET /${this.instance.prefix}/${route}`, res);
    return jsonObject(res, this.peer);
  }

  /** `GET /{prefix}/info`. */
  info(): Promise<Record<string, unknown>> {
    return this.#get("info");
  }

  /** `GET /{prefix}/queues`. */
  queues(): Promise<Record<string, unknown>> {
    return this.#get("queues");
  }

  /** `GET /{prefix}/queues/{backend}/messages?state=…`. */
  queueMessages(backend: string, state: "ready" | "dead"): Promise<Record<string, unknown>> {
    return this.#get(`queues/${encodeURIComponent(backend)}/messages?state=${state}`);
  }

  /** `POST /{prefix}/queues/{backend}/retry` (one dead letter, or all). */
  async queueRetry(backend: string, id?: string): Promise<Record<string, unknown>> {
    const route = `queues/${encodeURIComponent(backend)}/retry`;
    const res = await this.send("POST", prefixedUrl(this.instance, route), id ? { id } : {});
    if (res.status !== 200) throw this.failure(`POST /${this.instance.prefix}/${route}`, res);
    return jsonObject(res, this.peer);
  }

  /** `DELETE /{prefix}/queues/{backend}/dead?confirm={backend}`. */
  async queuePurge(backend: string): Promise<Record<string, unknown>> {
    const b = encodeURIComponent(backend);
    const route = `queues/${b}/dead?confirm=${b}`;
    const res = await this.send("DELETE", prefixedUrl(this.instance, route));
    if (res.status !== 200) throw this.failure(`DELETE /${this.instance.prefix}/${route}`, res);
    return jsonObject(res, this.peer);
  }

  /** `GET /{prefix}/pipelines`. */
  pipelines(): Promise<Record<string, unknown>> {
    return this.#get("pipelines");
  }

  /** `GET /{prefix}/routes`. */
  routes(): Promise<Record<string, unknown>> {
    return this.#get("routes");
  }

  /** `POST /api/reload` (not under the prefix); 200 and 422 are both answers. */
  async reload(): Promise<HttpResponse> {
    const res = await this.send("POST", `${instanceOrigin(this.instance)}/api/reload`);
    if (res.status !== 200 && res.status !== 422) throw this.failure("POST /api/reload", res);
    return res;
  }

  /** `POST /{prefix}/token` with a machine-token payload; the caller reads the answer. */
  token(payload: unknown): Promise<HttpResponse> {
    return this.send("POST", prefixedUrl(this.instance, "token"), payload);
  }

  /** `POST /{prefix}/update`; the caller reads the answer. */
  update(): Promise<HttpResponse> {
    return this.send("POST", prefixedUrl(this.instance, "update"));
  }

  /** The error for an unexpected answer of `what`, with the gateway's code and request id. */
  failure(what: string, res: HttpResponse, hint?: string): ManagementError {
    const b = (res.body as { error?: Record<string, unknown> } | undefined)?.error;
    const detail = b && typeof b.message === "string"
      ? `${b.message} (${b.code}${b.request_id ? `, request id ${b.request_id}` : ""})`
      : res.text.trim().slice(0, 200) || "no body";
    const notFound = res.status === 404 && b?.code === "not_found"
      ? `Is '${this.instance.prefix}' the gateway's management prefix? ` +
        "Check [management] prefix in its configuration."
      : res.status === 401
      ? tokenHint(this.instance)
      : undefined;
    return new ManagementError(
      `${this.peer} answered ${what} with ${res.status}: ${detail}`,
      res,
      hint ?? notFound,
    );
  }
}

/** The `error.code` of a management API answer, if any. */
export function errorCode(res: HttpResponse): string | undefined {
  const code = (res.body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === "string" ? code : undefined;
}
