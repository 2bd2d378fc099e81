/** Opening TCP and TLS connections to an upstream, with a connect timeout. */

import { Connection } from "./connection.ts";
import { Http1Error } from "./errors.ts";
import type { AbortHook } from "./request.ts";

/** Options of {@link connect}. */
export interface ConnectOptions {
  /** Extra PEM root certificates for https upstreams. */
  caCerts?: string[];
  /** PEM client certificate chain and key (mutual TLS). */
  clientCert?: { cert: string; key: string };
  /** Name the certificate is checked against (and SNI), instead of the URL's host. */
  serverName?: string;
  /** Limit for the TCP connect plus the TLS handshake. */
  timeoutMs: number;
}

/** Host name (IPv6 without brackets) and port of an http or https URL. */
export function hostAndPort(url: URL): { hostname: string; port: number } {
  const host = url.hostname;
  const hostname = host.startsWith("[") ? host.slice(1, -1) : host;
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { hostname, port };
}

/** Connects to `url`'s origin (TLS with ALPN `http/1.1` for https); aborting `signal` rejects with its reason. */
export async function connect(
  url: URL,
  origin: string,
  options: ConnectOptions,
  signal?: AbortHook,
): Promise<Connection> {
  const { hostname, port } = hostAndPort(url);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const onAbort = { handleEvent: () => controller.abort() };
  signal?.addEventListener("abort", onAbort);
  let conn: Deno.Conn | undefined;
  let stage = "connect";
  try {
    if (url.protocol === "https:" && options.clientCert) {
      stage = "tls";
      conn = await connectWithCertificate(hostname, port, options, controller.signal);
      return new Connection(conn, origin);
    }
    // Deno.connect + Deno.startTls rather than Deno.connectTls: only connect takes a signal, so
    // the timeout and the caller's abort can end a connect that hangs.
    const tcp = await Deno.connect({ hostname, port, signal: controller.signal });
    // A request is written as head then body: with Nagle's algorithm on, the body waits for the
    // peer's delayed ACK of the head (tens of milliseconds per request).
    tcp.setNoDelay(true);
    conn = tcp;
    if (url.protocol === "https:") {
      stage = "tls";
      const tls = await Deno.startTls(tcp, {
        hostname: options.serverName ?? hostname,
        caCerts: options.caCerts,
        alpnProtocols: ["http/1.1"],
      });
      conn = tls;
      // The handshake has no signal of its own: closing the socket ends it.
      const closeTls = () => tls.close();
      controller.signal.addEventListener("abort", closeTls, { once: true });
      try {
        controller.signal.throwIfAborted();
        await tls.handshake();
      } finally {
        controller.signal.removeEventListener("abort", closeTls);
      }
    }
    return new Connection(conn, origin);
  } catch (error) {
    try {
      conn?.close();
    } catch {
      // closed by the abort
    }
    if (signal?.aborted) throw signal.reason;
    const where = `${hostname}:${port}`;
    if (timedOut) {
      throw new Http1Error(
        `connecting to ${where} timed out after ${options.timeoutMs} ms`,
        "connect_timeout",
      );
    }
    const message = (error as Error).message;
    if (error instanceof Deno.errors.ConnectionRefused) {
      throw new Http1Error(`connection refused by ${where}`, "connection_refused", {
        cause: error,
      });
    }
    if (stage === "tls") {
      throw new Http1Error(`TLS handshake with ${where} failed: ${message}`, "tls_failed", {
        cause: error,
      });
    }
    throw new Http1Error(`cannot connect to ${where}: ${message}`, "connect_failed", {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * Mutual TLS: Deno.startTls cannot present a client certificate, so Deno.connectTls does the
 * connect and the handshake. It takes no signal: on abort the caller stops waiting, and a
 * connection that arrives later is closed.
 */
async function connectWithCertificate(
  hostname: string,
  port: number,
  options: ConnectOptions,
  signal: AbortSignal,
): Promise<Deno.TlsConn> {
  signal.throwIfAborted();
  const pending = Deno.connectTls({
    hostname,
    port,
    caCerts: options.caCerts,
    alpnProtocols: ["http/1.1"],
    cert: options.clientCert!.cert,
    key: options.clientCert!.key,
  }).then(async (tls) => {
    try {
      // (A TlsConn has no setNoDelay: Nagle stays on for these connections.)
      await tls.handshake();
      return tls;
    } catch (err) {
      tls.close();
      throw err;
    }
  });
  const aborted = new Promise<never>((_, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason), { once: true })
  );
  try {
    return await Promise.race([pending, aborted]);
  } catch (err) {
    pending.then((tls) => tls.close(), () => {});
    throw err;
  }
}
