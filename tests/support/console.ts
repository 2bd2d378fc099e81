/**
 * The operations console in tests: a gateway with a queued HTTP backend whose upstream answers 503
 * until the test mends it, and a cookie-keeping client of the console's forms (no browser).
 */
import { startUpstream, type TestUpstream } from "../harness.ts";
import { freePort } from "./ports.ts";
import { type GatewayProcess, startGateway } from "./gateway.ts";

/** An upstream that fails with 503 until `mend()`, then answers 201. */
export interface MendableUpstream extends TestUpstream {
  mend(): void;
  /** Requests it answered 201. */
  delivered(): number;
}

/** Starts an upstream that answers 503 (`Retry-After` absent) until it is mended. */
export function startBrokenUpstream(): MendableUpstream {
  let broken = true;
  let delivered = 0;
  const upstream = startUpstream(() => {
    if (broken) return new Response("upstream down for maintenance", { status: 503 });
    delivered++;
    return Response.json({ stored: true }, { status: 201 });
  });
  return { ...upstream, mend: () => broken = false, delivered: () => delivered };
}

/** A gateway with pipeline `orders` (endpoint `/orders`, queued backend `lab`) and its console. */
export interface ConsoleGateway {
  gateway: GatewayProcess;
  upstream: MendableUpstream;
  dataUrl: string;
  /** `http://127.0.0.1:<port>/admin/console`. */
  consoleUrl: string;
  queueDir: string;
  /** `GET /admin/queues` of backend `lab`. */
  labQueue(): Promise<{ depth: number; dead: number; delivered_total: number }>;
  stop(): Promise<void>;
}

/** TOML of the console gateway (`extra` is appended: more networks, tokens). */
export function consoleGatewayToml(o: {
  dataPort: number;
  mgmtPort: number;
  upstreamUrl: string;
  queueDir: string;
  extra?: string;
  workers?: number;
}): string {
  return `
[runtime]
workers = ${o.workers ?? 2}
[network.main]
bind = "127.0.0.1"
port = ${o.dataPort}
[management]
bind = "127.0.0.1"
port = ${o.mgmtPort}
[endpoints.orders_in]
service = "http"
[endpoints.orders_in.options]
path_prefix = "/orders"
[backends.lab]
service = "http"
[backends.lab.options]
base_url = "${o.upstreamUrl}"
[backends.lab.queue]
dir = "${o.queueDir}"
initial_backoff_ms = 20
max_backoff_ms = 40
max_attempts = 2
[pipelines.orders]
endpoints = ["orders_in"]
backends = ["lab"]
${o.extra ?? ""}`;
}

/** Starts the upstream and the gateway (`extra` TOML appended; `env` for the process). */
export async function startConsoleGateway(
  options: { extra?: string; env?: Record<string, string>; workers?: number } = {},
): Promise<ConsoleGateway> {
  const upstream = startBrokenUpstream();
  const queueDir = await Deno.makeTempDir({ prefix: "console-queue-" });
  const dataPort = freePort();
  const mgmtPort = freePort();
  let gateway: GatewayProcess;
  try {
    gateway = await startGateway({
      configText: consoleGatewayToml({
        dataPort,
        mgmtPort,
        upstreamUrl: upstream.url,
        queueDir,
        extra: options.extra,
        workers: options.workers,
      }),
      env: options.env,
    });
  } catch (err) {
    await upstream.stop();
    await Deno.remove(queueDir, { recursive: true });
    throw err;
  }
  return {
    gateway,
    upstream,
    dataUrl: `http://127.0.0.1:${dataPort}`,
    consoleUrl: `${gateway.mgmtUrl}/admin/console`,
    queueDir,
    labQueue: async () => {
      const res = await gateway.mgmtFetch("/admin/queues");
      const body = await res.json();
      return body.queues.find((q: { backend: string }) => q.backend === "lab");
    },
    stop: async () => {
      await gateway.stop();
      await upstream.stop();
      await Deno.remove(queueDir, { recursive: true }).catch(() => {});
    },
  };
}

/** A client of the console's pages and forms that keeps its cookies (as a browser without script). */
export class ConsoleClient {
  readonly #cookies = new Map<string, string>();
  readonly origin: string;

  constructor(readonly consoleUrl: string) {
    this.origin = new URL(consoleUrl).origin;
  }

  /** The cookies set so far (name → value). */
  get cookies(): ReadonlyMap<string, string> {
    return this.#cookies;
  }

  #keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /max-age=0/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  #cookieHeader(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  /** GET a console path (`""`, `/health`); redirects are not followed. */
  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(`${this.consoleUrl}${path}`, {
      redirect: "manual",
      headers: { cookie: this.#cookieHeader(), ...headers },
    });
    this.#keep(res);
    return res;
  }

  /** GET and read the page's text. */
  async page(path: string): Promise<{ status: number; html: string; res: Response }> {
    const res = await this.get(path);
    return { status: res.status, html: await res.text(), res };
  }

  /** POST a form as a browser does (its own Origin); `headers` override. */
  async post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const res = await fetch(`${this.consoleUrl}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: this.#cookieHeader(),
        "content-type": "application/x-www-form-urlencoded",
        origin: this.origin,
        "sec-fetch-site": "same-origin",
        ...headers,
      },
      body: new URLSearchParams(fields),
    });
    this.#keep(res);
    return res;
  }

  /** The `_csrf` field of a page's first form. */
  static csrfOf(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error("no CSRF field on the page");
    return m[1];
  }

  /** Signs in with `token`; returns the sign-in answer (303 to the dashboard when accepted). */
  async signIn(token: string): Promise<Response> {
    const { html } = await this.page("/login");
    const res = await this.post("/login", {
      _csrf: ConsoleClient.csrfOf(html),
      token,
      next: new URL(this.consoleUrl).pathname,
    });
    await res.body?.cancel();
    return res;
  }
}

/** One HTTP/1.1 request written by hand (a `Host` that `fetch` would not send); the whole answer. */
export async function rawRequest(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(head));
    let out = "";
    const buf = new Uint8Array(16 * 1024);
    const decoder = new TextDecoder();
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      out += decoder.decode(buf.subarray(0, n), { stream: true });
    }
    return out;
  } finally {
    try {
      conn.close();
    } catch {
      // Closed by the peer.
    }
  }
}
