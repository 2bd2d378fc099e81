/**
 * The `hl7` backend: each request's HL7 v2 message (body.ts) goes to the receiver over MLLP on a
 * pooled connection (pool.ts, connection.ts), one message at a time per connection, and the
 * receiver's ACK becomes the answer (ack.ts): `AA`/`CA` a 200 with the ACK as body, `AE`/`CE` a
 * 502 `hl7_ack_error`, `AR`/`CR` a 502 `hl7_ack_reject`, each carrying the ERR text. A pooled
 * connection the receiver dropped before the message was written is replaced; once written, a
 * message whose ACK never comes (the connection closed, `ack_timeout_secs` passed) fails the
 * request (502 `hl7_no_ack`, 504 `backend_timeout`) and is never sent again by the backend: with
 * a durable queue in front, the queue retries it. Receivers of `failover` take over while a
 * connection to `host` cannot be opened (destinations.ts).
 *
 * @example
 * ```ts
 * import { answerOfAck, parseAck } from "./mod.ts";
 *
 * const ack = parseAck("MSH|^~\\&|RCV|H|SND|H|20260101||ACK^A01^ACK|A1|P|2.5\rMSA|AA|MSG00001", "rcv");
 * const res = answerOfAck(ack, "rcv:2575", "adt_out");
 * console.log(res.status, res.headers.get("x-hl7-ack-code")); // 200 AA
 * ```
 *
 * @module
 */
import { resolve } from "node:path";
import type { BackendConfig } from "../../../shared/gateway_config/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { causedError, clientClosed, GatewayError } from "../../errors.ts";
import type { Backend, BackendCall, BuildContext } from "../../pipeline/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import { answerOfAck, parseAck, type ReadAck } from "./ack.ts";
import { outgoingMessage } from "./body.ts";
import { Hl7ConnectionError, type MllpConnection } from "./connection.ts";
import { type Destination, Destinations } from "./destinations.ts";
import type { Lease } from "./pool.ts";

export { answerOfAck, ER7_MEDIA_TYPE, parseAck } from "./ack.ts";
export { outgoingMessage } from "./body.ts";
export { type ConnectSettings, Hl7ConnectionError, MllpConnection } from "./connection.ts";
export { type Destination, Destinations, splitHostPort } from "./destinations.ts";
export { ConnectionPool, type Lease, type PoolSettings } from "./pool.ts";

/** Options of an hl7 backend (validated by the config schema, defaults applied). */
interface Hl7Options {
  host: string;
  port: number;
  failover?: string[];
  use_tls: boolean;
  ca_cert_path?: string;
  cert_path?: string;
  key_path?: string;
  pool_size: number;
  connect_timeout_secs: number;
  ack_timeout_secs: number;
  idle_secs: number;
  max_message_bytes: number;
  messages_per_connection: number;
}

/** TLS material read from the configured files. */
export interface Hl7Tls {
  /** PEM CA certificates; absent for the system's roots. */
  caCerts?: string[];
  /** PEM client certificate chain. */
  cert?: string;
  /** PEM client key. */
  key?: string;
}

/** An HL7 v2 receiver reached over MLLP. */
export class Hl7Backend implements Backend {
  readonly name: string;
  readonly config: BackendConfig;
  readonly #o: Hl7Options;
  readonly #destinations: Destinations;
  readonly #logger: Logger;

  /** A backend for `config`, with the TLS material already read. */
  constructor(config: BackendConfig, tls: Hl7Tls | undefined, logger: Logger) {
    this.name = config.name;
    this.config = config;
    this.#o = config.options as unknown as Hl7Options;
    this.#logger = logger;
    const host = this.#o.host.includes(":") && !this.#o.host.startsWith("[")
      ? `[${this.#o.host}]`
      : this.#o.host;
    this.#destinations = new Destinations(
      [`${host}:${this.#o.port}`, ...(this.#o.failover ?? [])],
      {
        tls,
        timeoutMs: this.#o.connect_timeout_secs * 1000,
        maxFrameBytes: this.#o.max_message_bytes,
      },
      {
        size: this.#o.pool_size,
        idleMs: this.#o.idle_secs * 1000,
        messagesPerConnection: this.#o.messages_per_connection,
        // A receiver closing an idle connection is worth a line; idle timeouts are routine.
        onDrop: (why) =>
          why === "idle"
            ? logger.debug("hl7 backend: idle connection closed", { backend: config.name })
            : logger.info("hl7 backend: pooled connection closed by the receiver", {
              backend: config.name,
            }),
      },
      (config.cooldown_secs ?? 10) * 1000,
    );
  }

  /** Connections opened so far (tests, status). */
  get connectionsOpened(): number {
    return this.#destinations.opened;
  }

  /** Sends the request's message and answers with its ACK. */
  async invoke(req: RequestEnvelope, call: BackendCall): Promise<ResponseEnvelope> {
    const msg = await outgoingMessage(req, this.#o.max_message_bytes);
    const controlId = msg.controlId;
    const signal = call.signal;
    const { dest, lease } = await this.#connect(signal, call);
    const peer = dest.peer;
    let conn = lease.conn;
    let reusable = false;
    try {
      try {
        await conn.send(msg.bytes, controlId);
      } catch (err) {
        // An idle connection the receiver let go before this write: nothing was sent yet.
        if (!lease.reused || !(err instanceof Hl7ConnectionError)) throw err;
        conn = await dest.pool.open(signal);
        await conn.send(msg.bytes, controlId);
      }
      const ack = await this.#ackOf(conn, peer, controlId, signal, call);
      reusable = true;
      return answerOfAck(ack, peer, this.name);
    } catch (err) {
      throw this.#error(err, signal);
    } finally {
      dest.pool.release(conn, reusable);
    }
  }

  /**
   * A connection to the first receiver that takes one: nothing has been sent yet, so a receiver
   * that cannot be reached is passed over for the next (and for the cool-down).
   */
  async #connect(
    signal: AbortSignal,
    call: BackendCall,
  ): Promise<{ dest: Destination; lease: Lease }> {
    const order = this.#destinations.order();
    for (let i = 0;; i++) {
      const dest = order[i];
      try {
        const lease = await dest.pool.acquire(signal);
        this.#destinations.succeeded(dest);
        return { dest, lease };
      } catch (err) {
        const unreachable = err instanceof Hl7ConnectionError && !signal.aborted;
        if (unreachable) this.#destinations.failed(dest);
        if (!unreachable || i === order.length - 1) throw this.#error(err, signal);
        call.logger.warn("hl7 backend: receiver unreachable, trying the next", {
          backend: this.name,
          receiver: dest.peer,
          next: order[i + 1].peer,
          error: (err as Error).message,
        });
      }
    }
  }

  /** Waits for the ACK of `controlId` on `conn`, skipping late ACKs of earlier messages. */
  async #ackOf(
    conn: MllpConnection,
    peer: string,
    controlId: string,
    signal: AbortSignal,
    call: BackendCall,
  ): Promise<ReadAck> {
    let ended: "timeout" | "aborted" | undefined;
    const timeoutMs = this.#o.ack_timeout_secs * 1000;
    const timer = setTimeout(() => {
      ended = "timeout";
      conn.close("no ACK in time");
    }, timeoutMs);
    const onAbort = () => {
      ended = "aborted";
      conn.close("the request ended");
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const frame = await conn.nextFrame();
        const ack = parseAck(new TextDecoder().decode(frame), peer);
        if (ack.controlId === controlId || ack.controlId === "" || controlId === "") return ack;
        if (conn.sentBefore(ack.controlId)) {
          call.logger.debug("hl7 backend: skipped a late ACK of an earlier message", {
            backend: this.name,
            control_id: ack.controlId,
          });
          continue;
        }
        throw new GatewayError(
          502,
          "hl7_bad_ack",
          `${peer} acknowledged message ${ack.controlId}, not the message sent (${controlId})`,
        );
      }
    } catch (err) {
      if (ended === "timeout") {
        throw new GatewayError(
          504,
          "backend_timeout",
          `no ACK from ${peer} within ${this.#o.ack_timeout_secs} s for message ` +
            `${controlId}; it may have been received, and is not sent again`,
        );
      }
      if (ended === "aborted") throw signal.reason;
      if (err instanceof Hl7ConnectionError) {
        const code = err.kind === "framing" ? "hl7_bad_ack" : "hl7_no_ack";
        throw causedError(
          502,
          code,
          `${peer}: ${err.message} before the ACK of message ${controlId}; it may have ` +
            "been received, and is not sent again",
          err,
        );
      }
      throw err;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Any failure as a GatewayError. */
  #error(err: unknown, signal: AbortSignal): GatewayError {
    if (err instanceof GatewayError) return err;
    if (signal.aborted && err === signal.reason) {
      if (err instanceof DOMException && err.name === "TimeoutError") {
        return new GatewayError(
          504,
          "backend_timeout",
          `backend ${this.name} did not answer within timeout_secs`,
        );
      }
      return clientClosed(err);
    }
    if (err instanceof Hl7ConnectionError) {
      if (err.kind === "connect_timeout") {
        return causedError(504, "backend_timeout", `hl7 receiver ${err.message}`, err);
      }
      return causedError(
        502,
        "backend_unavailable",
        `hl7 receiver of backend ${this.name}: ${err.message}`,
        err,
      );
    }
    return causedError(502, "backend_unavailable", (err as Error).message, err);
  }

  /** Closes the idle connections. */
  close(): void {
    this.#destinations.close();
  }
}

async function readPem(path: string | undefined, baseDir: string): Promise<string | undefined> {
  return path === undefined ? undefined : await Deno.readTextFile(resolve(baseDir, path));
}

/** Builds an `hl7` backend (reads its TLS files). */
export async function createHl7Backend(
  config: BackendConfig,
  ctx: BuildContext,
): Promise<Hl7Backend> {
  const o = config.options as unknown as Hl7Options;
  let tls: Hl7Tls | undefined;
  if (o.use_tls) {
    const ca = await readPem(o.ca_cert_path, ctx.baseDir);
    tls = {
      caCerts: ca === undefined ? undefined : [ca],
      cert: await readPem(o.cert_path, ctx.baseDir),
      key: await readPem(o.key_path, ctx.baseDir),
    };
  }
  return new Hl7Backend(config, tls, ctx.logger);
}
