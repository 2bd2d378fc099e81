/** Loopback servers for the client's tests: `Deno.serve` upstreams and raw `Deno.listen` peers. */

import { Http1Client, type Http1RequestInit } from "../../gateway/backends/http1/mod.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A `Deno.serve` upstream that records which client sockets it saw. */
export interface ServeUpstream {
  url: string;
  /** Remote ports of the requests so far: one per client connection. */
  connections: Set<number>;
  stop(): Promise<void>;
}

/** Starts `Deno.serve` on a free loopback port. */
export function serveUpstream(
  handler: (req: Request) => Response | Promise<Response>,
  tls?: { cert: string; key: string },
): ServeUpstream {
  const connections = new Set<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {}, ...tls },
    (req, info) => {
      connections.add(info.remoteAddr.port);
      return handler(req);
    },
  );
  const scheme = tls ? "https" : "http";
  return {
    url: `${scheme}://127.0.0.1:${server.addr.port}`,
    connections,
    stop: () => server.shutdown(),
  };
}

/** A request head read by a raw server. */
export interface RawRequest {
  method: string;
  target: string;
  /** Lower-cased names; repeated fields joined with ", ". */
  headers: Map<string, string>;
  /** The head as received (without the blank line). */
  head: string;
}

/** One accepted socket of a raw server, with a small buffered reader. */
export class RawConn {
  readonly conn: Deno.Conn;
  #buf = new Uint8Array(0);

  constructor(conn: Deno.Conn) {
    this.conn = conn;
  }

  async #more(): Promise<boolean> {
    const chunk = new Uint8Array(64 * 1024);
    let n: number | null;
    try {
      n = await this.conn.read(chunk);
    } catch {
      return false;
    }
    if (n === null) return false;
    const joined = new Uint8Array(this.#buf.length + n);
    joined.set(this.#buf);
    joined.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = joined;
    return true;
  }

  async #line(): Promise<string | null> {
    for (;;) {
      const lf = this.#buf.indexOf(10);
      if (lf !== -1) {
        const line = decoder.decode(this.#buf.subarray(0, lf)).replace(/\r$/, "");
        this.#buf = this.#buf.slice(lf + 1);
        return line;
      }
      if (!(await this.#more())) return null;
    }
  }

  /** The next request head, or null when the client closed the socket. */
  async readRequest(): Promise<RawRequest | null> {
    const first = await this.#line();
    if (first === null) return null;
    const [method, target] = first.split(" ");
    const headers = new Map<string, string>();
    const lines = [first];
    for (;;) {
      const line = await this.#line();
      if (line === null) return null;
      if (line === "") break;
      lines.push(line);
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
    }
    return { method, target, headers, head: lines.join("\r\n") };
  }

  /** Exactly `n` bytes (fewer if the client closed). */
  async readBytes(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    let filled = Math.min(n, this.#buf.length);
    out.set(this.#buf.subarray(0, filled));
    this.#buf = this.#buf.slice(filled);
    while (filled < n) {
      const got = await this.conn.read(out.subarray(filled)).catch(() => null);
      if (!got) break;
      filled += got;
    }
    return out.subarray(0, filled);
  }

  /** The request body as framed by content-length or chunked encoding. */
  async readBody(req: RawRequest): Promise<Uint8Array> {
    const length = req.headers.get("content-length");
    if (length !== undefined) return this.readBytes(Number(length));
    if (req.headers.get("transfer-encoding") !== "chunked") return new Uint8Array(0);
    const parts: Uint8Array[] = [];
    for (;;) {
      const size = parseInt((await this.#line()) ?? "0", 16);
      if (size === 0) {
        // Skip the trailers up to the blank line.
        while (await this.#line()) continue;
        break;
      }
      parts.push(await this.readBytes(size));
      await this.#line();
    }
    const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }

  /** Writes text (as latin-1-safe UTF-8) or bytes; false when the client is gone. */
  async write(data: string | Uint8Array): Promise<boolean> {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    try {
      let written = 0;
      while (written < bytes.length) written += await this.conn.write(bytes.subarray(written));
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the socket (idempotent). */
  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

/** A raw HTTP peer on `Deno.listen`: every accepted socket is handed to `handler`. */
export interface RawServer {
  url: string;
  port: number;
  /** Sockets accepted so far. */
  accepted: number;
  stop(): Promise<void>;
}

/** Starts a raw server on a free loopback port; the handler owns the socket until it returns. */
export function rawServer(handler: (conn: RawConn, index: number) => Promise<void>): RawServer {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const open = new Set<RawConn>();
  const tasks = new Set<Promise<void>>();
  const server: RawServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    accepted: 0,
    stop: async () => {
      listener.close();
      await accepting;
      for (const conn of open) conn.close();
      await Promise.all(tasks);
    },
  };
  const accepting = (async () => {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        return;
      }
      const raw = new RawConn(conn);
      open.add(raw);
      const task = handler(raw, server.accepted++).catch(() => {}).finally(() => {
        raw.close();
        open.delete(raw);
        tasks.delete(task);
      });
      tasks.add(task);
    }
  })();
  return server;
}

/** `client.request` with GET, no headers and no body unless given. */
export function send(
  client: Http1Client,
  url: string,
  init: Partial<Http1RequestInit> = {},
): Promise<Response> {
  return client.request(new URL(url), {
    method: init.method ?? "GET",
    headers: init.headers ?? new Headers(),
    body: init.body ?? null,
    signal: init.signal,
  });
}

/** A client with short timeouts for tests. */
export function testClient(
  options: ConstructorParameters<typeof Http1Client>[0] = {},
): Http1Client {
  return new Http1Client({ connectTimeoutMs: 5_000, ...options });
}

/** Bytes `0, 1, ..., 255, 0, ...` of length `n`. */
export function pattern(n: number, seed = 0): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i + seed) & 0xff;
  return out;
}

/** A stream of `total` pattern bytes in `chunkSize` chunks, made on demand. */
export function patternStream(total: number, chunkSize = 64 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close();
      const n = Math.min(chunkSize, total - sent);
      const chunk = new Uint8Array(n);
      for (let i = 0; i < n; i++) chunk[i] = (sent + i) & 0xff;
      sent += n;
      controller.enqueue(chunk);
    },
  });
}

/** Like {@link patternStream} but a byte stream (as Deno.serve's request bodies are). */
export function patternByteStream(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (sent >= total) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      const view = controller.byobRequest?.view;
      const target = view
        ? new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
        : new Uint8Array(64 * 1024);
      // Odd sizes, so chunks do not line up with anything.
      const n = Math.min(target.length, total - sent, 7777 + (sent % 3) * 1000);
      for (let i = 0; i < n; i++) target[i] = (sent + i) & 0xff;
      sent += n;
      if (view) controller.byobRequest!.respond(n);
      else controller.enqueue(target.subarray(0, n));
    },
  });
}

/** Hex SHA-256 of `bytes`. */
export async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Reads a body stream to the end, returning the byte count and the number of chunks. */
export async function drain(
  body: ReadableStream<Uint8Array> | null,
): Promise<{ bytes: number; chunks: number; ok: boolean }> {
  let bytes = 0;
  let chunks = 0;
  let ok = true;
  if (body === null) return { bytes, chunks, ok };
  for await (const chunk of body) {
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== ((bytes + i) & 0xff)) ok = false;
    }
    bytes += chunk.length;
    chunks++;
  }
  return { bytes, chunks, ok };
}
