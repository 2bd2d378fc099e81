/**
 * A bare `Deno.serve` reverse proxy for bench/http1_client and bench/http_proxy (the minimal Deno
 * proxy they compare against), forwarding with `fetch` or with Http1Client:
 * `deno run -A bench/http_proxy/minimal_proxy.ts --client fetch|http1|raw --upstream http://127.0.0.1:8080 --port 8081`,
 * and `--workers N` (with `--unstable-net`): the same proxy in this thread and N-1 worker threads
 * on the same port (SO_REUSEPORT), the runtime's own reference for the gateway's `[runtime] workers`.
 * `raw` and `raw-fields` are the runtime's floors, not proxies: see raw_forwarder.ts.
 */

import { Http1Client } from "../../gateway/backends/http1/mod.ts";
import { RawForwarder } from "./raw_forwarder.ts";

/** How the proxy forwards. */
export type ClientKind = "fetch" | "http1" | "raw" | "raw-fields";

/** Request headers that belong to one hop only (plus host, which the client sets). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/** The end-to-end fields of `headers`, read with forEach as a forwarding proxy reads them. */
function countFields(headers: Headers): number {
  let count = 0;
  headers.forEach((_value, name) => {
    if (!HOP_BY_HOP.has(name)) count++;
  });
  return count;
}

/** The value after `--name` in `args`. */
function flag(args: string[], name: string): string {
  const index = args.indexOf(`--${name}`);
  if (index === -1 || index + 1 >= args.length) throw new Error(`missing --${name}`);
  return args[index + 1];
}

/** Starts the proxy; resolves when it listens. */
export function startProxy(
  kind: ClientKind,
  upstream: string,
  port: number,
  /** SO_REUSEPORT (needs `--unstable-net`): several threads serve the port. */
  reusePort = false,
): Deno.HttpServer<Deno.NetAddr> {
  const base = upstream.replace(/\/$/, "");
  const client = new Http1Client();
  const raw = kind === "raw" || kind === "raw-fields"
    ? new RawForwarder(new URL(upstream))
    : undefined;
  return Deno.serve({ hostname: "127.0.0.1", port, reusePort, onListen() {} }, (req) => {
    // What any proxy pays the runtime to read the request's fields and its abort signal.
    if (kind === "raw-fields") return raw!.forward(countFields(req.headers), req.signal);
    if (raw) return raw.forward();
    // The path and query start at the first "/" after "http://": one URL parse per request.
    const target = new URL(base + req.url.slice(req.url.indexOf("/", 8)));
    if (kind === "fetch") {
      // forEach + append: several times cheaper than copying all and deleting.
      const headers = new Headers();
      req.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) headers.append(name, value);
      });
      return fetch(target, {
        method: req.method,
        headers,
        body: req.body,
        redirect: "manual",
        signal: req.signal,
      });
    }
    // The client takes any `forEach` source: a filtering view, no copy into a new Headers.
    const incoming = req.headers;
    return client.request(target, {
      method: req.method,
      headers: {
        forEach(callback) {
          incoming.forEach((value, name) => {
            if (!HOP_BY_HOP.has(name)) callback(value, name);
          });
        },
      },
      body: req.body,
      signal: req.signal,
    });
  });
}

/** In a worker thread: the proxy of the settings the main thread posts. */
function serveInWorker(): void {
  (self as unknown as { onmessage: (event: MessageEvent) => void }).onmessage = (
    event: MessageEvent<{ kind: ClientKind; upstream: string; port: number }>,
  ) => void startProxy(event.data.kind, event.data.upstream, event.data.port, true);
}

if (self.name === "minimal-proxy-worker") serveInWorker();
else if (import.meta.main) {
  const kind = flag(Deno.args, "client");
  if (kind !== "fetch" && kind !== "http1" && kind !== "raw" && kind !== "raw-fields") {
    throw new Error(`--client fetch|http1|raw|raw-fields, got ${kind}`);
  }
  const upstream = flag(Deno.args, "upstream");
  const port = Number(flag(Deno.args, "port"));
  const workers = Deno.args.includes("--workers") ? Number(flag(Deno.args, "workers")) : 1;
  startProxy(kind, upstream, port, workers > 1);
  for (let i = 1; i < workers; i++) {
    new Worker(import.meta.url, { type: "module", name: "minimal-proxy-worker" })
      .postMessage({ kind, upstream, port });
  }
}
