/**
 * One pooled HTTP/3 connection per target: opened on first use, shared by every concurrent
 * request, replaced when it is lost or the server sent GOAWAY (requests in flight on the old one
 * finish there).
 */
import { Http3Client } from "../../http3/mod.ts";

/** Where a target is and how to trust it. */
export interface H3TargetAddress {
  host: string;
  port: number;
  caCerts?: string[];
  /** Name the certificate is checked against (SNI); default: `host`. */
  serverName?: string;
}

/** The connection slot of one target. */
export class H3ConnectionSlot {
  readonly address: H3TargetAddress;
  #current: Http3Client | undefined;
  #connecting: Promise<Http3Client> | undefined;
  #retired = new Set<Http3Client>();
  #closed = false;
  /** Connections opened so far (1 + reconnections). */
  opened = 0;

  constructor(address: H3TargetAddress) {
    this.address = address;
  }

  /** A usable connection: the current one, or a new one (concurrent callers share it). */
  async get(signal?: AbortSignal): Promise<Http3Client> {
    if (this.#closed) throw new Error("backend is closed");
    const current = this.#current;
    if (current?.usable) return current;
    if (current) this.#retire(current);
    this.#connecting ??= this.#connect().finally(() => this.#connecting = undefined);
    if (!signal) return await this.#connecting;
    signal.throwIfAborted();
    return await new Promise<Http3Client>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#connecting!.then(resolve, reject).finally(() =>
        signal.removeEventListener("abort", onAbort)
      );
    });
  }

  async #connect(): Promise<Http3Client> {
    const a = this.address;
    const client = await Http3Client.connect({
      hostname: a.host,
      port: a.port,
      serverName: a.serverName ?? a.host,
      caCerts: a.caCerts,
      // A handshake gives up after 3 s of silence (nothing listens on the UDP port); keep-alives
      // every second keep an idle pooled connection open.
      idleTimeoutMs: 3_000,
      keepAliveMs: 1_000,
    });
    this.opened++;
    if (this.#closed) {
      client.close();
      throw new Error("backend is closed");
    }
    this.#current = client;
    return client;
  }

  /** A connection that stopped being usable: close it once its last request is done. */
  #retire(client: Http3Client): void {
    if (this.#current === client) this.#current = undefined;
    if (client.session.isClosed) return;
    this.#retired.add(client);
    const check = () => {
      if (client.active === 0) {
        client.close();
        this.#retired.delete(client);
      } else setTimeout(check, 50);
    };
    check();
  }

  /** Drop the current connection after a connection-level failure. */
  reset(client: Http3Client): void {
    if (this.#current === client) {
      this.#current = undefined;
      client.close();
    }
  }

  /** Close every connection. */
  close(): void {
    this.#closed = true;
    this.#current?.close();
    this.#current = undefined;
    for (const c of this.#retired) c.close();
    this.#retired.clear();
  }
}
