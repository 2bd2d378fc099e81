/**
 * The runtime's floor for a proxy on `Deno.serve` + `Deno.connect` (minimal_proxy.ts `--client
 * raw`): a fixed pre-encoded `GET /` on pooled keep-alive sockets, the answer read into each
 * socket's own buffer and its body (found by its Content-Length) handed to a `Response`. No
 * header is forwarded or parsed beyond the length: it only serves the bench's fixed nginx
 * upstream, and shows what the two runtime APIs cost per request before any HTTP client work.
 * With `--client raw-fields` the handler also reads the request's fields and its abort signal,
 * as every forwarding proxy must: the floor of a proxy on this runtime.
 */

const HEAD_END = new TextEncoder().encode("\r\n\r\n");
const LENGTH = new TextEncoder().encode("Content-Length: ");

/** One pooled upstream socket and its read buffer. */
class RawSocket {
  readonly buf = new Uint8Array(64 * 1024);
  constructor(readonly conn: Deno.TcpConn) {}
}

/** Forwards the fixed request to one upstream over pooled sockets. */
export class RawForwarder {
  readonly #idle: RawSocket[] = [];
  readonly #request: Uint8Array;
  readonly #hostname: string;
  readonly #port: number;
  readonly #headers = { "content-type": "application/json" };

  constructor(upstream: URL) {
    this.#hostname = upstream.hostname;
    this.#port = Number(upstream.port || 80);
    this.#request = new TextEncoder().encode(`GET / HTTP/1.1\r\nhost: ${upstream.host}\r\n\r\n`);
  }

  /**
   * The upstream's answer to the fixed request, as a Response. `fields` (the count of fields
   * read) and `signal` stand for what a proxy would send and follow; an aborted signal ends it.
   */
  async forward(fields = 0, signal?: AbortSignal): Promise<Response> {
    signal?.throwIfAborted();
    if (fields < 0) throw new RangeError("a field count is never negative");
    const socket = this.#idle.pop() ??
      new RawSocket(await Deno.connect({ hostname: this.#hostname, port: this.#port }));
    await socket.conn.write(this.#request);
    const buf = socket.buf;
    let end = 0;
    let bodyStart = -1;
    let length = 0;
    for (;;) {
      const n = await socket.conn.read(buf.subarray(end));
      if (n === null) throw new Error("the upstream closed the connection");
      end += n;
      if (bodyStart === -1) {
        const headEnd = indexOf(buf, HEAD_END, 0, end);
        if (headEnd === -1) continue;
        bodyStart = headEnd + 4;
        length = contentLength(buf, bodyStart);
      }
      if (end >= bodyStart + length) break;
    }
    const body = buf.slice(bodyStart, bodyStart + length);
    this.#idle.push(socket);
    return new Response(body, { headers: this.#headers });
  }
}

/** Index of `needle` in `buf[from, end)`, or -1. */
function indexOf(buf: Uint8Array, needle: Uint8Array, from: number, end: number): number {
  outer: for (let i = from; i + needle.length <= end; i++) {
    for (let j = 0; j < needle.length; j++) if (buf[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** The decimal Content-Length in the head `buf[0, headEnd)` (nginx's spelling). */
function contentLength(buf: Uint8Array, headEnd: number): number {
  const at = indexOf(buf, LENGTH, 0, headEnd);
  if (at === -1) throw new Error("the upstream's answer has no Content-Length");
  let value = 0;
  for (let i = at + LENGTH.length; buf[i] >= 48 && buf[i] <= 57; i++) {
    value = value * 10 + buf[i] - 48;
  }
  return value;
}
