/**
 * The one door to the runtime's internals: the per-connection HTTP server that `Deno.serve` runs
 * for every connection it accepts (`Deno[Deno.internal].serveHttpOnConnection`), and the forceful
 * cancel it registers on the abort signal it is given. Neither is a public API, so nothing else
 * in the tree touches them.
 *
 * Before the first use in a process (each isolate: a worker thread has its own) a self-test
 * proves that the door still works as the guard needs: one loopback connection is served through
 * it, one request answered, the captured cancel called, and the client must see the connection
 * end. It takes about a millisecond. When the door is gone or the self-test fails (a Deno upgrade
 * that changed the internal), {@link runtimeHttp} resolves to `undefined` with a warning, and the
 * guarded listener falls back to relaying the bytes to a loopback `Deno.serve` (public APIs only,
 * slower) instead of refusing to start.
 *
 * @module
 */

/** What the runtime's server for one connection returns. */
export interface ConnectionServer {
  /** Settles once the runtime has let the connection go. */
  readonly finished: Promise<void>;
  /** The graceful close: answers what is in flight, then closes. */
  shutdown(): Promise<void>;
}

/** Answers a request whose handler threw. */
export type OnError = (error: unknown) => Response | Promise<Response>;

/** The runtime's HTTP server for one accepted connection, with its forceful cancel. */
export interface RuntimeHttp {
  /**
   * Serves HTTP on `conn` (HTTP/1.1, h2c by prior knowledge, or what ALPN chose over TLS).
   * `onCancel` receives the runtime's forceful cancel of the connection when the runtime
   * registers it (during this call): called, it closes the connection at once, and throws (where
   * it can be caught) when the runtime is already closing it.
   */
  serveConnection(
    conn: Deno.Conn,
    handler: Deno.ServeHandler<Deno.NetAddr>,
    onError: OnError,
    onCancel: (cancel: () => void) => void,
  ): ConnectionServer;
}

/** The internal's signature as Deno 2.9.5 has it. */
type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal | undefined,
  handler: Deno.ServeHandler<Deno.NetAddr>,
  onError: OnError,
  onListen: (scheme: string) => void,
) => ConnectionServer;

const noop = () => {};

/** `Deno[Deno.internal].serveHttpOnConnection`, or undefined when the runtime has none. */
export function internalServeOnConnection(): unknown {
  const deno = Deno as unknown as Record<symbol, Record<string, unknown> | undefined> & {
    internal?: symbol;
  };
  const key = deno.internal;
  return typeof key === "symbol" ? deno[key]?.serveHttpOnConnection : undefined;
}

/**
 * Wraps a candidate for the internal as a {@link RuntimeHttp}, unchecked. The runtime registers
 * its cancel with `addEventListener` on the signal it is given; a signal of our own that only
 * captures it is handed instead of an `AbortController`'s, because the runtime's listener throws,
 * uncaught, when the connection is already being closed, and a captured call can be caught.
 */
function wrap(serve: ServeOnConnection): RuntimeHttp {
  return {
    serveConnection(conn, handler, onError, onCancel) {
      const signal = {
        aborted: false,
        addEventListener: (_type: string, cancel: () => void) => onCancel(cancel),
        removeEventListener: noop,
      } as unknown as AbortSignal;
      return serve(conn, signal, handler, onError, noop);
    },
  };
}

/**
 * Proves that `candidate` (default: the runtime's internal) serves a connection and that its
 * captured cancel closes it: the {@link RuntimeHttp} built on it, or why not. Event-driven: it
 * resolves as soon as the client sees the end of the connection; `timeoutMs` bounds a door that
 * never closes it.
 */
export async function probeRuntimeHttp(
  candidate: unknown = internalServeOnConnection(),
  timeoutMs = 2_000,
): Promise<RuntimeHttp | string> {
  if (typeof candidate !== "function") return "Deno[Deno.internal].serveHttpOnConnection is gone";
  if (candidate.length !== 5) {
    return `serveHttpOnConnection takes ${candidate.length} arguments, not 5`;
  }
  const http = wrap(candidate as ServeOnConnection);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let client: Deno.Conn | undefined;
  let conn: Deno.Conn | undefined;
  let finished: Promise<void> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    [client, conn] = await Promise.all([
      Deno.connect({ hostname: "127.0.0.1", port: (listener.addr as Deno.NetAddr).port }),
      listener.accept(),
    ]);
    let cancel: (() => void) | undefined;
    let served = false;
    const served204 = () => {
      served = true;
      return new Response(null, { status: 204 });
    };
    const server = http.serveConnection(
      conn,
      served204,
      () => new Response(null, { status: 500 }),
      (c) => {
        cancel = c;
      },
    );
    finished = server.finished.catch(noop);
    const outcome = new Promise<string | undefined>((resolve) => {
      timer = setTimeout(() => {
        resolve(`no answer or no close within ${timeoutMs} ms`);
        client?.close(); // ends the reads below
        client = undefined;
      }, timeoutMs);
    });
    const exchange = (async (c: Deno.Conn): Promise<string | undefined> => {
      await c.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: self-test\r\n\r\n"));
      const head = await readHead(c);
      if (!head.startsWith("HTTP/1.1 204") || !served) {
        return `the request was not answered by its handler (${JSON.stringify(head.slice(0, 40))})`;
      }
      if (typeof cancel !== "function") return "no cancel was registered on the signal";
      cancel();
      // The connection is kept alive after the answer: only the cancel can end it now.
      try {
        if (await c.read(new Uint8Array(64)) !== null) return "bytes after the cancel";
      } catch {
        // reset: closed as well
      }
      await finished;
      return undefined;
    })(client).catch((err) => `the self-test failed: ${(err as Error)?.message ?? err}`);
    const problem = await Promise.race([exchange, outcome]);
    return problem ?? http;
  } catch (err) {
    return `the self-test failed: ${(err as Error)?.message ?? err}`;
  } finally {
    clearTimeout(timer);
    listener.close();
    closeQuietly(client);
    // A failed door's server may still hold the connection: it ends with the client's side.
    if (finished) await within(finished, 200);
    closeQuietly(conn);
  }
}

function closeQuietly(conn: Deno.Conn | undefined): void {
  try {
    conn?.close();
  } catch {
    // closed already (or taken by the runtime's server)
  }
}

/** Waits for `promise`, at most `ms`. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => timer = setTimeout(resolve, ms))]);
  clearTimeout(timer);
}

/** Reads until the end of an answer's head (or of the stream). */
async function readHead(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(1024);
  let text = "";
  while (!text.includes("\r\n\r\n")) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}

let checked: Promise<RuntimeHttp | undefined> | undefined;

/**
 * The runtime's per-connection HTTP server, self-tested once per isolate (the first guarded
 * listener waits for it; later ones get the settled answer), or `undefined` with a warning when
 * it is gone or fails the test. The warning goes to the first caller's `warn` (the gateway passes
 * its JSON logger before it starts a listener; default: stderr).
 */
export function runtimeHttp(
  warn: (message: string) => void = console.warn,
): Promise<RuntimeHttp | undefined> {
  return checked ??= checkedRuntimeHttp(internalServeOnConnection(), warn);
}

/** {@link probeRuntimeHttp} of `candidate`, warning (through `warn`) when it fails. */
export async function checkedRuntimeHttp(
  candidate: unknown = internalServeOnConnection(),
  warn: (message: string) => void = console.warn,
): Promise<RuntimeHttp | undefined> {
  const result = await probeRuntimeHttp(candidate);
  if (typeof result !== "string") return result;
  warn(
    `connection guard: the runtime's per-connection HTTP server cannot be used on Deno ` +
      `${Deno.version.deno} (${result}); relaying each connection to a loopback Deno.serve ` +
      `instead (slower). Run the Deno version package.json pins to get it back.`,
  );
  return undefined;
}
