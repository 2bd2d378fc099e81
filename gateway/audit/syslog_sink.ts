/**
 * The audit trail's syslog sink (`[audit.syslog]`): every record as an RFC 5424 message to a
 * central collector, over TLS with octet-counting framing (RFC 5425, as IHE ATNA requires), plain
 * TCP with the same framing, or UDP (RFC 5426). Records wait in a bounded queue: a request never
 * waits for the collector. While it cannot be reached the sink is marked degraded (once, through
 * the gateway's degraded components), reconnects with a growing pause (1 s to 60 s, on the
 * trail's Clock), and records beyond `queue_size` are dropped and counted. A record leaves the
 * queue once its bytes are written to the connection; the connection is read so that a collector
 * closing it is noticed before the next write (records written in the very moment a collector
 * dies can still be lost: the trail file keeps every record).
 */
import { hostname } from "node:os";
import { resolve } from "node:path";
import { type Clock, type Logger, systemClock, type TimerHandle } from "../../shared/mod.ts";
import { type AuditSyslogConfig, SYSLOG_FACILITIES } from "../../shared/gateway_config/mod.ts";
import type { ComponentHealth } from "../observability/mod.ts";
import type { AuditEntry } from "./entry.ts";
import { octetCounted, type SyslogHeader, syslogMessage } from "./syslog_message.ts";

/** The degraded component's name. */
export const SYSLOG_COMPONENT = "audit.syslog";
/** Records written per write call at most. */
const BATCH = 256;
/** Pauses between connection attempts. */
const MIN_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
/** Longest wait for one write to the collector. */
const WRITE_TIMEOUT_MS = 30_000;
/** Largest UDP datagram sent (RFC 5426 3.2: at least 480, 2048 should be supported). */
const MAX_DATAGRAM = 8192;

/** What the sink reports. */
export interface SyslogSinkReport {
  lost(n: number, reason: string): void;
  written(n: number): void;
  queued(n: number): void;
}

/** What the sink needs besides its configuration. */
export interface SyslogSinkDeps {
  report: SyslogSinkReport;
  logger: Logger;
  health?: ComponentHealth;
  clock?: Clock;
  /** Directory relative paths (CA, certificate) resolve against. */
  baseDir: string;
}

/** A writable connection to the collector. */
interface Link {
  /** Writes framed messages; rejects when the connection failed. */
  send(messages: string[]): Promise<void>;
  /** True once the collector closed the connection (or it failed). */
  readonly closed: boolean;
  close(): void;
}

/** The syslog sink of the audit trail. */
export class SyslogSink {
  #config: AuditSyslogConfig;
  #node: string;
  #header: SyslogHeader;
  readonly #deps: SyslogSinkDeps;
  readonly #clock: Clock;
  #queue: AuditEntry[] = [];
  #link: Link | undefined;
  #sending: Promise<void> | undefined;
  #retry: TimerHandle | undefined;
  #backoffMs = 0;
  #stopping = false;
  #degraded = false;
  /** TLS material read at configure. */
  #tls: { caCerts?: string[]; cert?: string; key?: string } = {};

  private constructor(config: AuditSyslogConfig, node: string, deps: SyslogSinkDeps) {
    this.#config = config;
    this.#node = node;
    this.#deps = deps;
    this.#clock = deps.clock ?? systemClock;
    this.#header = headerOf(config, node);
  }

  /** A sink for `config` (its files read now: a missing CA throws); `node` names this gateway. */
  static async open(
    config: AuditSyslogConfig,
    node: string,
    deps: SyslogSinkDeps,
  ): Promise<SyslogSink> {
    const sink = new SyslogSink(config, node, deps);
    await sink.retune(config, node);
    return sink;
  }

  /** True while the collector cannot be reached. */
  get degraded(): boolean {
    return this.#degraded;
  }

  /** Records waiting. */
  get length(): number {
    return this.#queue.length;
  }

  /** Applies a new `[audit.syslog]` (a changed address or certificate reconnects). */
  async retune(config: AuditSyslogConfig, node: string): Promise<void> {
    const read = async (path: string | undefined, key: string) => {
      if (path === undefined) return undefined;
      const file = resolve(this.#deps.baseDir, path);
      try {
        return await Deno.readTextFile(file);
      } catch (err) {
        throw new Error(`audit.syslog.${key} ${file} cannot be read: ${(err as Error).message}`);
      }
    };
    const tls = {
      caCerts: await read(config.ca_path, "ca_path").then((ca) => ca ? [ca] : undefined),
      cert: await read(config.cert_path, "cert_path"),
      key: await read(config.key_path, "key_path"),
    };
    const changed = JSON.stringify([config, tls]) !== JSON.stringify([this.#config, this.#tls]);
    this.#config = config;
    this.#tls = tls;
    this.#node = node;
    this.#header = headerOf(config, node);
    if (changed) {
      this.#link?.close();
      this.#link = undefined;
    }
  }

  /** Queues a record (dropped and counted when the queue is full); never waits. */
  add(entry: AuditEntry): void {
    if (this.#queue.length >= this.#config.queue_size) {
      this.#deps.report.lost(1, "queue_full");
      return;
    }
    this.#queue.push(entry);
    this.#deps.report.queued(this.#queue.length);
    if (!this.#sending && this.#retry === undefined) this.#sending = this.#drain();
  }

  /** Sends what is queued until the queue is empty or the collector cannot be reached. */
  async #drain(): Promise<void> {
    // Let the records of a burst gather into one write.
    await new Promise((r) => setTimeout(r, 0));
    try {
      while (this.#queue.length) {
        const batch = this.#queue.slice(0, BATCH);
        try {
          if (!this.#link || this.#link.closed) {
            this.#link?.close();
            this.#link = undefined;
            this.#link = await this.#connect();
          }
          await this.#link.send(batch.map((e) => syslogMessage(e, this.#header, this.#node)));
        } catch (err) {
          this.#link?.close();
          this.#link = undefined;
          this.#unreachable((err as Error).message);
          return;
        }
        this.#queue.splice(0, batch.length);
        this.#deps.report.written(batch.length);
        this.#deps.report.queued(this.#queue.length);
        this.#reachable();
      }
    } finally {
      this.#sending = undefined;
    }
  }

  #unreachable(reason: string): void {
    const { host } = this.#config;
    if (!this.#degraded) {
      this.#degraded = true;
      const text = `the syslog collector ${host}:${portOf(this.#config)} cannot be reached ` +
        `(${reason.slice(0, 200)}); records wait (up to ${this.#config.queue_size})`;
      if (this.#deps.health) this.#deps.health.degraded(SYSLOG_COMPONENT, text, this);
      else this.#deps.logger.error("audit: syslog collector unreachable", { reason: text });
    }
    if (this.#stopping) return;
    this.#backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(MIN_BACKOFF_MS, this.#backoffMs * 2));
    const retry = this.#clock.setTimeout(() => {
      this.#retry = undefined;
      if (!this.#sending) this.#sending = this.#drain();
    }, this.#backoffMs);
    if (this.#clock === systemClock) Deno.unrefTimer(retry);
    this.#retry = retry;
  }

  #reachable(): void {
    this.#backoffMs = 0;
    if (!this.#degraded) return;
    this.#degraded = false;
    if (this.#deps.health) this.#deps.health.recovered(SYSLOG_COMPONENT, this);
    else this.#deps.logger.info("audit: syslog collector reachable again");
  }

  /** Tries now instead of at the end of the pause (tests, a reload). */
  retryNow(): void {
    if (this.#retry !== undefined) this.#clock.clearTimeout(this.#retry);
    this.#retry = undefined;
    if (!this.#sending && this.#queue.length) this.#sending = this.#drain();
  }

  async #connect(): Promise<Link> {
    const c = this.#config;
    const port = portOf(c);
    const timeout = AbortSignal.timeout(c.connect_timeout_ms);
    if (c.transport === "udp") return await udpLink(c.host, port);
    const connecting: Promise<Deno.Conn> = c.transport === "tls"
      ? Deno.connectTls({
        hostname: c.host,
        port,
        caCerts: this.#tls.caCerts,
        ...(this.#tls.cert && this.#tls.key ? { cert: this.#tls.cert, key: this.#tls.key } : {}),
      })
      : Deno.connect({ hostname: c.host, port });
    const conn = await raceTimeout(connecting, timeout, `connect to ${c.host}:${port}`);
    if (c.transport === "tls") {
      try {
        await raceTimeout((conn as unknown as Deno.TlsConn).handshake(), timeout, "TLS handshake");
      } catch (err) {
        conn.close();
        throw err;
      }
    }
    return streamLink(conn);
  }

  /** One last attempt to send what is queued; what is left is counted as lost. */
  async close(): Promise<void> {
    this.#stopping = true;
    if (this.#retry !== undefined) this.#clock.clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#sending;
    if (this.#queue.length && !this.#degraded) {
      this.#sending = this.#drain();
      await this.#sending;
    }
    if (this.#queue.length) this.#deps.report.lost(this.#queue.length, "unsent_at_stop");
    this.#queue = [];
    this.#deps.report.queued(0);
    this.#link?.close();
    this.#link = undefined;
    if (this.#degraded) this.#deps.health?.recovered(SYSLOG_COMPONENT, this, true);
  }
}

function portOf(c: AuditSyslogConfig): number {
  return c.port ?? (c.transport === "tls" ? 6514 : 514);
}

function headerOf(c: AuditSyslogConfig, node: string): SyslogHeader {
  return {
    facility: SYSLOG_FACILITIES[c.facility] ?? SYSLOG_FACILITIES.authpriv,
    hostname: c.hostname ?? node,
    appName: c.app_name,
    procId: String(Deno.pid),
  };
}

/** The name of this gateway in the messages: `[audit] source_name`, else the host name. */
export function nodeName(sourceName: string | undefined): string {
  return sourceName ?? hostname();
}

async function raceTimeout<T>(work: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error(`${what}: timed out`));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
    // A connection that completes after the timeout is closed, not leaked.
    if (signal.aborted) {
      work.then((v) => (v as { close?: () => void })?.close?.(), () => {});
    }
  }
}

/** A TCP or TLS connection: messages octet-counted; a read loop notices the collector leaving. */
function streamLink(conn: Deno.Conn): Link {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      conn.close();
    } catch {
      // already closed
    }
  };
  // A collector sends nothing: anything read ends the loop, EOF or an error mark it closed.
  (async () => {
    const buffer = new Uint8Array(512);
    try {
      while (!closed && (await conn.read(buffer)) !== null) {
        // RFC 5425 has no replies; ignore what a collector might send.
      }
    } catch {
      // reset
    }
    close();
  })();
  return {
    get closed() {
      return closed;
    },
    async send(messages) {
      const frames = messages.map(octetCounted);
      const total = frames.reduce((n, f) => n + f.length, 0);
      const bytes = new Uint8Array(total);
      let at = 0;
      for (const f of frames) {
        bytes.set(f, at);
        at += f.length;
      }
      const timeout = AbortSignal.timeout(WRITE_TIMEOUT_MS);
      let written = 0;
      while (written < bytes.length) {
        if (closed) throw new Error("the collector closed the connection");
        written += await raceTimeout(conn.write(bytes.subarray(written)), timeout, "write");
      }
    },
    close,
  };
}

/** RFC 5426: one message per datagram, from an unbound local port. */
async function udpLink(host: string, port: number): Promise<Link> {
  const address = (await Deno.resolveDns(host, "A").catch(() => []))[0] ??
    (/^[\d.]+$/.test(host) ? host : undefined);
  const target = address ?? host;
  const socket = Deno.listenDatagram({ transport: "udp", hostname: "0.0.0.0", port: 0 });
  let closed = false;
  const encoder = new TextEncoder();
  return {
    get closed() {
      return closed;
    },
    async send(messages) {
      for (const m of messages) {
        const bytes = encoder.encode(m);
        await socket.send(bytes.subarray(0, MAX_DATAGRAM), {
          transport: "udp",
          hostname: target,
          port,
        });
      }
    },
    close() {
      if (closed) return;
      closed = true;
      socket.close();
    },
  };
}
