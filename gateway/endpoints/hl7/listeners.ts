/**
 * The MLLP listeners of the running gateway, one per `bind_addr:port`, kept across config
 * generations like the DIMSE listeners: a reload starts the listeners of new addresses before the
 * swap and closes those no longer configured after it (letting their connections finish). Each
 * message is served by the endpoint of the generation current when it arrives.
 */
import { createHash } from "node:crypto";
import { type MllpHandler, MllpListener, type MllpTlsServer } from "../../adapters/mllp/mod.ts";
import type { ListenerSet } from "../../adapters/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import { type Hl7Endpoint, hl7ListenerKey } from "./endpoint.ts";

/** Identifies TLS material and limits without keeping the key in another string. */
function fingerprint(ep: Hl7Endpoint): string {
  const o = ep.options;
  const tls: MllpTlsServer | undefined = ep.tls;
  return createHash("sha256").update(JSON.stringify([
    tls?.cert ?? "",
    tls?.key ?? "",
    tls?.clientCa ?? "",
    o.max_message_bytes,
    o.idle_timeout_secs,
    o.max_connections,
  ])).digest("hex");
}

/** Resolves the endpoint currently configured for a listener key. */
export type Hl7EndpointResolver = (key: string) => Hl7Endpoint | undefined;

/** The set of running MLLP listeners. */
export class Hl7Listeners implements ListenerSet<Iterable<Hl7Endpoint>> {
  readonly #listeners = new Map<string, MllpListener>();
  readonly #material = new WeakMap<MllpListener, string>();
  readonly #tls = new WeakMap<MllpListener, boolean>();
  readonly #draining = new Set<MllpListener>();
  readonly #resolve: Hl7EndpointResolver;
  readonly #logger: Logger;

  constructor(resolve: Hl7EndpointResolver, logger: Logger) {
    this.#resolve = resolve;
    this.#logger = logger;
  }

  /**
   * Start a listener for every endpoint address not listened on yet (all or nothing); one whose
   * TLS material or limits changed is restarted on its port (open connections keep the old).
   */
  async sync(endpoints: Iterable<Hl7Endpoint>): Promise<void> {
    const started: [string, MllpListener][] = [];
    const replaced: [string, MllpListener][] = [];
    try {
      for (const ep of endpoints) {
        if (started.some(([k]) => k === ep.key)) continue;
        const running = this.#listeners.get(ep.key);
        if (running && this.#material.get(running) === fingerprint(ep)) continue;
        if (running) {
          await running.stopAccepting();
          replaced.push([ep.key, running]);
        }
        started.push([ep.key, await this.#listen(ep)]);
      }
    } catch (err) {
      for (const [, l] of started) await l.close();
      for (const [key, old] of replaced) {
        this.#listeners.delete(key);
        this.#draining.add(old);
        const previous = this.#resolve(key);
        if (previous) {
          await this.#listen(previous).then((l) => this.#listeners.set(key, l), () => {});
        }
      }
      throw err;
    }
    for (const [, old] of replaced) this.#draining.add(old);
    for (const [k, l] of started) {
      this.#listeners.set(k, l);
      this.#logger.info("MLLP listener started", {
        address: k,
        port: l.port,
        tls: this.#tls.get(l) ?? false,
      });
    }
  }

  async #listen(ep: Hl7Endpoint): Promise<MllpListener> {
    const key = ep.key;
    const o = ep.options;
    const listener = await MllpListener.listen({
      hostname: o.bind_addr,
      port: o.port,
      maxFrameBytes: o.max_message_bytes,
      idleMs: o.idle_timeout_secs * 1000,
      maxConnections: o.max_connections,
      tls: ep.tls,
      onConnection: (remote) => {
        const endpoint = this.#resolve(key);
        if (!endpoint) return undefined;
        if (!endpoint.acceptsFrom(remote.address)) {
          this.#logger.warn("HL7 connection refused: address not in allowed_source_addresses", {
            endpoint: endpoint.config.name,
            address: key,
            remote_addr: remote.address,
          });
          return undefined;
        }
        // Each message is served by the endpoint current when it arrives: a long-lived
        // connection follows reloads (the generation it started on may be long closed).
        const current = (): MllpHandler => {
          const now = this.#resolve(key);
          if (!now) throw new Error(`hl7 endpoint on ${key} is no longer configured`);
          return now.connection(remote.address);
        };
        const first = current();
        return {
          message: (payload, signal) => current().message(payload, signal),
          framingError: (err) => current().framingError(err),
          closed: (reason, pending, detail) => first.closed(reason, pending, detail),
        };
      },
      onRefused: (address, open) =>
        this.#logger.warn("HL7 connection refused: max_connections reached", {
          endpoint: ep.config.name,
          address: key,
          remote_addr: address,
          open,
        }),
      onTlsError: (err, address) =>
        this.#logger.warn("HL7 TLS handshake refused", {
          endpoint: ep.config.name,
          address: key,
          remote_addr: address,
          error: err.message,
        }),
    }).catch((err: Error) => {
      throw new Error(`hl7 endpoint ${ep.config.name} cannot listen on ${key}: ${err.message}`);
    });
    this.#material.set(listener, fingerprint(ep));
    this.#tls.set(listener, ep.tls !== undefined);
    return listener;
  }

  /** Close the listeners no endpoint of `endpoints` uses; open connections finish. */
  async closeStale(endpoints: Iterable<Hl7Endpoint>): Promise<void> {
    const wanted = new Set([...endpoints].map((e) => e.key));
    for (const [key, l] of this.#listeners) {
      if (wanted.has(key)) continue;
      this.#listeners.delete(key);
      await l.close(true);
    }
  }

  /** Bound port of the listener of an endpoint's options. */
  port(options: Record<string, unknown>): number | undefined {
    return this.#listeners.get(hl7ListenerKey(options))?.port;
  }

  /** Close everything; `drain` lets open connections finish their message. */
  async close(drain = false): Promise<void> {
    const all = [...this.#listeners.values(), ...this.#draining];
    await Promise.all(all.map((l) => l.close(drain)));
    if (drain) return;
    this.#listeners.clear();
    this.#draining.clear();
  }
}
