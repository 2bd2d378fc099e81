/**
 * The DIMSE listeners of the running gateway, one per `bind_addr:port`, kept across config
 * generations like the HTTP listeners: a reload starts the listeners of new addresses before the
 * swap and closes those no longer configured after it (letting their associations finish). A new
 * association is served by the endpoint of the generation current when it arrives.
 */
import { DimseListener } from "../../adapters/dimse/mod.ts";
import type { ListenerSet } from "../../adapters/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import { type DicomScpEndpoint, listenerKeyOf } from "./endpoint.ts";

/** Resolves the endpoint currently configured for a listener key. */
export type EndpointResolver = (key: string) => DicomScpEndpoint | undefined;

/** The set of running DIMSE listeners. */
export class DimseListeners implements ListenerSet<Iterable<DicomScpEndpoint>> {
  readonly #listeners = new Map<string, DimseListener>();
  readonly #resolve: EndpointResolver;
  readonly #logger: Logger;

  constructor(resolve: EndpointResolver, logger: Logger) {
    this.#resolve = resolve;
    this.#logger = logger;
  }

  /** Start a listener for every endpoint address not listened on yet (all or nothing). */
  async sync(endpoints: Iterable<DicomScpEndpoint>): Promise<void> {
    const started: [string, DimseListener][] = [];
    try {
      for (const ep of endpoints) {
        if (this.#listeners.has(ep.key) || started.some(([k]) => k === ep.key)) continue;
        const key = ep.key;
        const listener = await DimseListener.listen({
          hostname: ep.options.bind_addr,
          port: ep.options.port,
          onConnection: (conn, remote) => {
            const current = this.#resolve(key);
            if (!current) {
              conn.socket.destroy();
              return;
            }
            current.serve(conn, remote.address);
          },
        }).catch((err: Error) => {
          throw new Error(
            `dicom_scp endpoint ${ep.config.name} cannot listen on ${key}: ${err.message}`,
          );
        });
        started.push([key, listener]);
      }
    } catch (err) {
      for (const [, l] of started) await l.close();
      throw err;
    }
    for (const [k, l] of started) {
      this.#listeners.set(k, l);
      this.#logger.info("DIMSE listener started", { address: k, port: l.port });
    }
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

  /** Close everything (shutdown). */
  async close(): Promise<void> {
    for (const l of this.#listeners.values()) await l.close();
    this.#listeners.clear();
  }
}
