/**
 * The data plane's HTTP listeners across configuration generations: one per `[network.<name>]`
 * (HTTP/1.1, h2, h2c; TLS when a certificate is set) and its QUIC listener when the network has
 * `[network.<name>.http3]`, whose port the HTTP responses advertise with Alt-Svc. A reload starts
 * what is new before the runtime swap (`sync`) and retires what is gone after it (`closeStale`);
 * a listener whose address and certificate did not change keeps running.
 */
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import {
  altSvcValue,
  assertPortFree,
  assertUdpPortFree,
  checkHttp3Material,
  guardOf,
  type Http3Listener,
  http3ListenerKey,
  type HttpListener,
  listenerKey,
  type ListenerSet,
  readHttp3Tls,
  readTls,
  serveHttp3,
  serveNetwork,
  withAltSvc,
} from "../adapters/mod.ts";
import type { Protocol } from "../envelope.ts";
import { AddressCounts, runtimeHttp } from "../../shared/net/mod.ts";
import { LISTEN_LOCK_BYTES, noteListen } from "../workers/mod.ts";

/** What the listeners hand each request to (the gateway's dispatch). */
export type RequestHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  tls: boolean,
  network: string,
  protocol?: Protocol,
) => Promise<Response>;

/** The HTTP and HTTP/3 listeners of the data plane. */
export class HttpListeners implements ListenerSet<GatewayConfig> {
  readonly #handle: RequestHandler;
  readonly #internalError: (err: unknown) => Response;
  readonly #logger: Logger;
  readonly #drainMsOf: () => number;
  readonly #http3: boolean;
  readonly #sharedMemory: ((name: string, bytes: number) => SharedArrayBuffer) | undefined;
  readonly #listeners = new Map<string, HttpListener>();
  /** Inodes of each listener's listening socket (Linux), by key: what the watchdog shuts down. */
  readonly #sockets = new Map<string, string[]>();
  /** QUIC listeners by key, and the Alt-Svc value of each network that has one. */
  readonly #h3Listeners = new Map<string, Http3Listener>();
  readonly #altSvc = new Map<string, string>();

  constructor(o: {
    handle: RequestHandler;
    internalError: (err: unknown) => Response;
    logger: Logger;
    /** The grace period of a listener that closes (read when it closes: a reload may change it). */
    drainMs: () => number;
    /** Whether QUIC listeners run here (default true; false in the data-plane workers). */
    http3?: boolean;
    /**
     * Memory shared with the same ports' listeners in the other workers, by name (per-address
     * connection counts); default: each listener its own.
     */
    sharedMemory?: (name: string, bytes: number) => SharedArrayBuffer;
  }) {
    this.#handle = o.handle;
    this.#internalError = o.internalError;
    this.#logger = o.logger;
    this.#drainMsOf = o.drainMs;
    this.#http3 = o.http3 ?? true;
    this.#sharedMemory = o.sharedMemory;
  }

  get #drainMs(): number {
    return this.#drainMsOf();
  }

  /** Ports actually bound, by network name (tests bind port 0). */
  ports(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const l of this.#listeners.values()) out[l.network] = l.port;
    return out;
  }

  /** UDP ports of the QUIC listeners, by network name. */
  http3Ports(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const l of this.#h3Listeners.values()) out[l.network] = l.port;
    return out;
  }

  /** Inodes of the listening sockets of this isolate's HTTP listeners (empty: not known). */
  sockets(): string[] {
    return [...this.#sockets.values()].flat();
  }

  /** `network:port` of each HTTP listener, for the start-up log line. */
  describe(): string[] {
    return [...this.#listeners.values()].map((l) => `${l.network}:${l.port}`);
  }

  /** Refuses at start a TCP or UDP port that is taken, naming the network. */
  static assertPortsFree(config: GatewayConfig): void {
    for (const net of Object.values(config.network)) {
      assertPortFree(net.bind, net.port, `network ${net.name}`);
      if (net.http3) assertUdpPortFree(net.http3.bind, net.http3.port, `network ${net.name} http3`);
    }
  }

  async sync(config: GatewayConfig, checkPorts = false): Promise<void> {
    const started: HttpListener[] = [];
    const sockets = new Map<string, string[]>();
    const lock = this.#sharedMemory?.("network.listen_lock", LISTEN_LOCK_BYTES);
    if (Object.values(config.network).some((net) => guardOf(net))) {
      // The guard's self-test of the runtime's internals (once per isolate): a failure is
      // logged here, as JSON with the rest, and the guard relays instead.
      await runtimeHttp((reason) => this.#logger.warn("[net] connection guard relays", { reason }));
    }
    try {
      for (const net of Object.values(config.network)) {
        const tls = await readTls(net);
        const key = listenerKey(net, tls);
        if (this.#listeners.has(key)) continue;
        if (checkPorts && !this.#holdsPort(net.bind, net.port)) {
          assertPortFree(net.bind, net.port, `network ${net.name}`);
        }
        const addresses = this.#sharedMemory?.(
          `network.${net.name}.addresses`,
          AddressCounts.bytesFor(),
        );
        // The socket's inode is noted: a watchdog can take a frozen isolate's socket out.
        const { value: listener, inodes } = noteListen(
          lock && new Int32Array(lock),
          () =>
            serveNetwork(
              net,
              tls,
              // Responses advertise the network's QUIC listener with Alt-Svc.
              (req, info, secure) => {
                const response = this.#handle(req, info, secure, net.name);
                const altSvc = this.#altSvc.get(net.name);
                return altSvc ? response.then((r) => withAltSvc(r, altSvc)) : response;
              },
              (err) => this.#internalError(err),
              addresses,
            ),
          (l) => l.port,
        );
        started.push(listener);
        sockets.set(listener.key, inodes);
      }
    } catch (err) {
      for (const l of started) await l.server.shutdown();
      throw err;
    }
    for (const l of started) {
      this.#listeners.set(l.key, l);
      this.#sockets.set(l.key, sockets.get(l.key) ?? []);
    }
    try {
      await this.#syncHttp3(config, checkPorts);
    } catch (err) {
      for (const l of started) {
        this.#listeners.delete(l.key);
        this.#sockets.delete(l.key);
        await l.server.shutdown();
      }
      throw err;
    }
  }

  /**
   * Start the QUIC listener of each network with `[network.<name>.http3]` that is not running
   * yet; a listener whose certificate changed hands its UDP socket over.
   */
  async #syncHttp3(config: GatewayConfig, checkPorts: boolean): Promise<void> {
    if (!this.#http3) {
      // The main thread runs the QUIC listener; responses here still advertise its port.
      this.#altSvc.clear();
      for (const net of Object.values(config.network)) {
        if (net.http3) this.#altSvc.set(net.name, altSvcValue(net.http3.port));
      }
      return;
    }
    const started: Http3Listener[] = [];
    try {
      for (const net of Object.values(config.network)) {
        if (!net.http3) continue;
        const material = (await readHttp3Tls(net))!;
        const key = http3ListenerKey(net, material);
        if (this.#h3Listeners.has(key)) continue;
        checkHttp3Material(material, `network ${net.name} http3`);
        const previous = [...this.#h3Listeners.values()].find((l) =>
          l.config.port === net.http3!.port && l.config.bind === net.http3!.bind
        );
        if (checkPorts && !previous) {
          assertUdpPortFree(net.http3.bind, net.http3.port, `network ${net.name} http3`);
        }
        const listener = serveHttp3(
          net,
          material,
          (req, info) => this.#handle(req, info, true, net.name, "h3"),
          (err, where) => this.#logger.warn("http3", { where, error: (err as Error)?.message }),
          previous,
        );
        started.push(listener);
      }
    } catch (err) {
      for (const l of started) await l.server.shutdown(0);
      throw err;
    }
    for (const l of started) this.#h3Listeners.set(l.key, l);
    this.#altSvc.clear();
    for (const net of Object.values(config.network)) {
      const l = [...this.#h3Listeners.values()].filter((x) => x.network === net.name).pop();
      if (net.http3 && l) this.#altSvc.set(net.name, altSvcValue(l.port));
    }
  }

  #holdsPort(bind: string, port: number): boolean {
    for (const l of this.#listeners.values()) {
      const addr = l.server.addr;
      if (addr.port === port && (addr.hostname === bind || bind === "0.0.0.0")) return true;
    }
    return false;
  }

  async closeStale(config: GatewayConfig): Promise<void> {
    const wanted = new Set<string>();
    for (const net of Object.values(config.network)) {
      wanted.add(listenerKey(net, await readTls(net).catch(() => undefined)));
    }
    for (const [key, l] of this.#listeners) {
      if (wanted.has(key)) continue;
      this.#listeners.delete(key);
      this.#sockets.delete(key);
      // shutdown() lets requests on the old listener finish.
      void l.server.shutdown();
    }
    // Retired QUIC listeners send GOAWAY and drain.
    const wantedH3 = new Set<string>();
    for (const net of Object.values(config.network)) {
      const m = net.http3 ? await readHttp3Tls(net).catch(() => undefined) : undefined;
      if (m) wantedH3.add(http3ListenerKey(net, m));
    }
    for (const [key, l] of this.#h3Listeners) {
      if (wantedH3.has(key)) continue;
      this.#h3Listeners.delete(key);
      void l.server.shutdown(this.#drainMs);
    }
  }

  /**
   * Stop accepting and drain: resolves when every listener has finished its requests, or when
   * the grace period has passed and what was left has been closed.
   */
  shutdown(): Promise<unknown> {
    return Promise.all([
      ...[...this.#listeners.values()].map((l) => l.server.shutdown(this.#drainMs)),
      // GOAWAY, then the same bounded drain.
      ...[...this.#h3Listeners.values()].map((l) => l.server.shutdown(this.#drainMs)),
    ]);
  }
}
