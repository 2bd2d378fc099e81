/**
 * The DIMSE listeners of the running gateway, one per `bind_addr:port`, kept across config
 * generations like the HTTP listeners: a reload starts the listeners of new addresses before the
 * swap and closes those no longer configured after it (letting their associations finish). A new
 * association is served by the endpoint of the generation current when it arrives.
 */
import { createHash } from "node:crypto";
import type { DimseListener, DimseTlsServer } from "../../adapters/dimse/mod.ts";
import type { ListenerSet } from "../../adapters/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import type { DicomScpEndpoint } from "./endpoint.ts";
import { listenerKeyOf } from "./listener_key.ts";

/** Identifies TLS material without keeping the key in another string ("" for plain TCP). */
function tlsFingerprint(tls: DimseTlsServer | undefined): string {
  if (!tls) return "";
  return createHash("sha256").update(JSON.stringify([tls.cert, tls.key, tls.clientCa ?? ""]))
    .digest("hex");
}

/** Resolves the endpoint currently configured for a listener key. */
export type EndpointResolver = (key: string) => DicomScpEndpoint | undefined;

/** The set of running DIMSE listeners. */
export class DimseListeners implements ListenerSet<Iterable<DicomScpEndpoint>> {
  readonly #listeners = new Map<string, DimseListener>();
  /** The TLS material each listener was started with (its fingerprint; "" for plain TCP). */
  readonly #material = new WeakMap<DimseListener, string>();
  /** Listeners replaced by a restart, whose associations are still open. */
  readonly #draining = new Set<DimseListener>();
  readonly #resolve: EndpointResolver;
  readonly #logger: Logger;

  constructor(resolve: EndpointResolver, logger: Logger) {
    this.#resolve = resolve;
    this.#logger = logger;
  }

  /**
   * Start a listener for every endpoint address not listened on yet (all or nothing). A listener
   * whose TLS material changed is restarted on its port: its open associations go on with the old
   * material, new ones get the new (a connection in the moment between is refused).
   */
  async sync(endpoints: Iterable<DicomScpEndpoint>): Promise<void> {
    const started: [string, DimseListener][] = [];
    const replaced: [string, DimseListener, DicomScpEndpoint][] = [];
    try {
      for (const ep of endpoints) {
        if (started.some(([k]) => k === ep.key)) continue;
        const running = this.#listeners.get(ep.key);
        if (running && this.#material.get(running) === tlsFingerprint(ep.tls)) continue;
        if (running) {
          await running.stopAccepting();
          replaced.push([ep.key, running, ep]);
        }
        started.push([ep.key, await this.#listen(ep)]);
      }
    } catch (err) {
      for (const [, l] of started) await l.close();
      // The replaced listeners take their ports back (their own material).
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
      this.#logger.info("DIMSE listener started", {
        address: k,
        port: l.port,
        tls: this.#material.get(l) !== "",
      });
    }
  }

  /** Starts the listener of `ep`'s address with its TLS material. */
  async #listen(ep: DicomScpEndpoint): Promise<DimseListener> {
    const key = ep.key;
    // Loaded already with the endpoint (createDicomScpEndpoint): the DIMSE stack and dcmjs-dimse.
    const { DimseListener } = await import("../../adapters/dimse/mod.ts");
    const listener = await DimseListener.listen({
      hostname: ep.options.bind_addr,
      port: ep.options.port,
      tls: ep.tls,
      onConnection: (conn, remote) => {
        const current = this.#resolve(key);
        if (!current) {
          conn.socket.destroy();
          return;
        }
        if (!current.acceptsFrom(remote.address)) {
          this.#logger.warn("DICOM connection refused: address not in allowed_source_addresses", {
            endpoint: current.config.name,
            address: key,
            remote_addr: remote.address,
          });
          conn.socket.destroy();
          return;
        }
        current.serve(conn, remote.address);
      },
      onTlsError: (err, address) =>
        this.#logger.warn("DICOM TLS handshake refused", {
          endpoint: ep.config.name,
          address: key,
          remote_addr: address,
          error: err.message,
        }),
    }).catch((err: Error) => {
      throw new Error(
        `dicom_scp endpoint ${ep.config.name} cannot listen on ${key}: ${err.message}`,
      );
    });
    this.#material.set(listener, tlsFingerprint(ep.tls));
    return listener;
  }

  /** Close the listeners no endpoint of `endpoints` uses; open associations finish. */
  async closeStale(endpoints: Iterable<DicomScpEndpoint>): Promise<void> {
    const wanted = new Set([...endpoints].map((e) => e.key));
    for (const [key, l] of this.#listeners) {
      if (wanted.has(key)) continue;
      this.#listeners.delete(key);
      await l.close(true);
    }
  }

  /** Bound port of the listener of an endpoint's options (tests bind port 0). */
  port(options: Record<string, unknown>): number | undefined {
    return this.#listeners.get(listenerKeyOf(options))?.port;
  }

  /**
   * Close everything (shutdown); `drain` lets open associations finish (the caller bounds the
   * wait, then calls again without it to end what is left).
   */
  async close(drain = false): Promise<void> {
    const all = [...this.#listeners.values(), ...this.#draining];
    await Promise.all(all.map((l) => l.close(drain)));
    if (drain) return;
    this.#listeners.clear();
    this.#draining.clear();
  }
}
