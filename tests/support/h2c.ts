/**
 * A raw HTTP/2 client over cleartext TCP (prior knowledge), for tests that look at frames: which
 * streams the server resets, whether it ends the connection. It sends what it is told (HEADERS
 * with literal HPACK fields, DATA, RST_STREAM) and records every frame it receives; it does not
 * decode HPACK, so answers are read from their DATA frames.
 */

/** Frame types (RFC 9113 §6). */
export const H2 = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
} as const;

/** Flags: END_STREAM (DATA, HEADERS), ACK (SETTINGS, PING), END_HEADERS. */
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;

/** One frame received. */
export interface H2Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Uint8Array;
  /** `performance.now()` when it arrived. */
  at: number;
}

/** A connection of {@link connectH2c}. */
export interface H2cConnection {
  /** Every frame received so far, in order. */
  readonly frames: H2Frame[];
  /** True once the server has closed the connection (or it broke). */
  readonly closed: boolean;
  /** Opens stream `stream` with `fields` (pseudo-headers first); `end` sends no body. */
  headers(stream: number, fields: [string, string][], end?: boolean): Promise<void>;
  /** Sends `bytes` on `stream`; `end` ends the request body. */
  data(stream: number, bytes: Uint8Array, end?: boolean): Promise<void>;
  /** Resets `stream` with error `code` (8: CANCEL). */
  reset(stream: number, code?: number): Promise<void>;
  /** Resolves with the first frame (received so far or later) that `match` accepts. */
  next(match: (frame: H2Frame) => boolean, timeoutMs?: number): Promise<H2Frame>;
  /** The DATA of `stream` received so far, as text. */
  text(stream: number): string;
  close(): void;
}

function frame(type: number, flags: number, stream: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(9 + payload.length);
  out[0] = (payload.length >> 16) & 0xff;
  out[1] = (payload.length >> 8) & 0xff;
  out[2] = payload.length & 0xff;
  out[3] = type;
  out[4] = flags;
  new DataView(out.buffer).setUint32(5, stream & 0x7fffffff);
  out.set(payload, 9);
  return out;
}

/** HPACK literal header fields without indexing, new names, no Huffman (RFC 7541 §6.2.2). */
function literalFields(fields: [string, string][]): Uint8Array {
  const bytes: number[] = [];
  const string = (s: string) => {
    const encoded = new TextEncoder().encode(s);
    if (encoded.length > 126) throw new Error(`header field too long for this client: ${s}`);
    bytes.push(encoded.length, ...encoded);
  };
  for (const [name, value] of fields) {
    bytes.push(0x00);
    string(name);
    string(value);
  }
  return new Uint8Array(bytes);
}

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** Connects to `port` on the loopback, sends the preface and empty SETTINGS, and reads frames. */
export async function connectH2c(port: number, hostname = "127.0.0.1"): Promise<H2cConnection> {
  const conn = await Deno.connect({ hostname, port });
  const frames: H2Frame[] = [];
  const waiters = new Set<() => void>();
  let closed = false;
  const send = (bytes: Uint8Array) => conn.write(bytes).then(() => {});
  await send(PREFACE);
  await send(frame(H2.SETTINGS, 0, 0, new Uint8Array(0)));
  const notify = () => {
    for (const wake of [...waiters]) wake();
  };
  void (async () => {
    let buffered = new Uint8Array(0);
    const chunk = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await conn.read(chunk);
        if (n === null) break;
        const joined = new Uint8Array(buffered.length + n);
        joined.set(buffered);
        joined.set(chunk.subarray(0, n), buffered.length);
        buffered = joined;
        while (buffered.length >= 9) {
          const length = (buffered[0] << 16) | (buffered[1] << 8) | buffered[2];
          if (buffered.length < 9 + length) break;
          const f: H2Frame = {
            type: buffered[3],
            flags: buffered[4],
            stream: new DataView(buffered.buffer, buffered.byteOffset).getUint32(5) & 0x7fffffff,
            payload: buffered.slice(9, 9 + length),
            at: performance.now(),
          };
          buffered = buffered.slice(9 + length);
          frames.push(f);
          // The server's SETTINGS need an ACK, or it stops serving the connection.
          if (f.type === H2.SETTINGS && !(f.flags & ACK)) {
            await send(frame(H2.SETTINGS, ACK, 0, new Uint8Array(0))).catch(() => {});
          }
          notify();
        }
      }
    } catch {
      // reset or closed by close()
    }
    closed = true;
    notify();
  })();
  return {
    frames,
    get closed() {
      return closed;
    },
    headers: (stream, fields, end = false) =>
      send(frame(H2.HEADERS, END_HEADERS | (end ? END_STREAM : 0), stream, literalFields(fields))),
    data: (stream, bytes, end = false) => send(frame(H2.DATA, end ? END_STREAM : 0, stream, bytes)),
    reset: (stream, code = 8) => {
      const payload = new Uint8Array(4);
      new DataView(payload.buffer).setUint32(0, code);
      return send(frame(H2.RST_STREAM, 0, stream, payload));
    },
    next: (match, timeoutMs = 10_000) =>
      new Promise<H2Frame>((resolve, reject) => {
        const check = () => {
          const found = frames.find(match);
          if (found) {
            done();
            resolve(found);
          } else if (closed) {
            done();
            reject(new Error("the connection closed before the frame arrived"));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no such frame within ${timeoutMs} ms`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    text: (stream) => {
      const decoder = new TextDecoder();
      return frames.filter((f) => f.type === H2.DATA && f.stream === stream)
        .map((f) => decoder.decode(f.payload)).join("");
    },
    close: () => {
      try {
        conn.close();
      } catch {
        // closed already
      }
    },
  };
}
