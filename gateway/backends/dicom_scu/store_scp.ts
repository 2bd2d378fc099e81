/**
 * The incoming C-STORE SCP of `dimse_retrieve_mode = "move"`: the PACS sends the instances of a
 * C-MOVE to it (AE title = the backend's `local_aet`, port `incoming_store_port`). One listener per
 * port is shared by every backend and config generation that uses it (reference counted), so a
 * reload does not fight over the port. Each running C-MOVE registers a collector; an incoming
 * instance goes to the collector whose identifier (study, series, instance UIDs) it matches.
 */
import { DimseListener, lib, negotiate, type RawDataset } from "../../adapters/dimse/mod.ts";
import { type DicomJson, jsonString, STATUS } from "../../dicom/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import type { FileCollector } from "./retrieve.ts";

/** An in-flight C-MOVE waiting for its instances. */
interface Waiter {
  identifier: DicomJson;
  collector: FileCollector;
}

/** A shared incoming store SCP. */
export class IncomingStoreScp {
  readonly port: number;
  readonly aet: string;
  readonly #listener: DimseListener;
  readonly #waiters = new Set<Waiter>();
  #refs = 0;

  private constructor(listener: DimseListener, aet: string) {
    this.#listener = listener;
    this.port = listener.port;
    this.aet = aet;
  }

  /** Register a C-MOVE's collector; returns the unregister function. */
  expect(identifier: DicomJson, collector: FileCollector): () => void {
    const w = { identifier, collector };
    this.#waiters.add(w);
    return () => this.#waiters.delete(w);
  }

  #route(header: RawDataset): Waiter | undefined {
    const json = header.headerJson();
    const fields: [string, string][] = [["0020000D", "study"], ["0020000E", "series"], [
      "00080018",
      "instance",
    ]];
    for (const w of this.#waiters) {
      const ok = fields.every(([tag]) => {
        const wanted = w.identifier[tag]?.Value?.map(String) ?? [];
        return wanted.length === 0 || wanted.includes(jsonString(json, tag) ?? "");
      });
      if (ok) return w;
    }
    return undefined;
  }

  static #shared = new Map<number, Promise<IncomingStoreScp>>();
  /** Listeners being closed, by port: the next one on that port is opened after. */
  static #closing = new Map<number, Promise<void>>();

  /** Take a reference on the SCP of `port` (started when first needed). */
  static async acquire(port: number, aet: string, logger: Logger): Promise<IncomingStoreScp> {
    // A retrieve that starts while the last one's listener is still closing would find the port
    // in use (EADDRINUSE): it waits for the close, then opens its own.
    for (let closing; (closing = IncomingStoreScp.#closing.get(port));) await closing;
    let pending = IncomingStoreScp.#shared.get(port);
    if (!pending) {
      pending = IncomingStoreScp.#start(port, aet, logger);
      IncomingStoreScp.#shared.set(port, pending);
      pending.catch(() => IncomingStoreScp.#shared.delete(port));
    }
    const scp = await pending;
    if (scp.aet !== aet) {
      throw new Error(`incoming_store_port ${port} already serves AE title ${scp.aet}, not ${aet}`);
    }
    scp.#refs++;
    return scp;
  }

  /** Drop a reference; the last one closes the listener. */
  async release(): Promise<void> {
    if (--this.#refs > 0) return;
    IncomingStoreScp.#shared.delete(this.port);
    const closing = this.#listener.close().catch(() => {});
    IncomingStoreScp.#closing.set(this.port, closing);
    try {
      await closing;
    } finally {
      if (IncomingStoreScp.#closing.get(this.port) === closing) {
        IncomingStoreScp.#closing.delete(this.port);
      }
    }
  }

  static async #start(port: number, aet: string, logger: Logger): Promise<IncomingStoreScp> {
    // deno-lint-ignore prefer-const
    let scp: IncomingStoreScp;
    const listener = await DimseListener.listen({
      hostname: "0.0.0.0",
      port,
      onConnection(conn) {
        conn.handler = {
          associationRequested(association) {
            const rejection = negotiate(association, {
              calledAet: aet,
              services: new Set(["store"]),
            });
            if (rejection) {
              logger.warn("incoming store association rejected", { reason: rejection.why });
              conn.sendAssociationReject(rejection.result, rejection.source, rejection.reason);
              return;
            }
            conn.sendAssociationAccept();
          },
          store(request, reply) {
            const res = lib.responses.CStoreResponse.fromRequest(request);
            const waiter = scp.#route(request.getDataset() as RawDataset);
            if (!waiter) res.setStatus(STATUS.unableToProcess);
            else {res.setStatus(
                waiter.collector.add(request) ? STATUS.success : STATUS.outOfResources,
              );}
            reply(res);
          },
        };
      },
    });
    scp = new IncomingStoreScp(listener, aet);
    return scp;
  }
}
