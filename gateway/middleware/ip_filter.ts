/**
 * The `ip_filter` middleware: allow and deny lists of addresses and CIDR ranges (IPv4 and IPv6).
 * A request from a denied address, or from one outside a non-empty allow list, gets 403
 * `ip_denied` and never reaches a backend. The client address is the connection's peer; when that
 * peer is one of `trusted_proxies`, the `X-Forwarded-For` chain is read from the right, skipping
 * trusted proxies, and the first other address is the client (a client cannot choose its address
 * by sending the header itself, because only a trusted peer's header is read). The address used is
 * written to the `client.ip` metadata.
 */
import type { MiddlewareConfig } from "../../shared/gateway_config/mod.ts";
import { AddressRanges, parseAddress } from "../../shared/net/mod.ts";
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";
import type { Middleware } from "../pipeline/mod.ts";

/** Options of `ip_filter` (after schema checks). */
export interface IpFilterOptions {
  allow: string[];
  deny: string[];
  trusted_proxies: string[];
}

/** Most `X-Forwarded-For` entries looked at. */
const MAX_FORWARDED = 32;

/** The address-list middleware. */
export class IpFilterMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: false };
  readonly #allow: AddressRanges;
  readonly #deny: AddressRanges;
  readonly #trusted: AddressRanges;

  constructor(name: string, options: IpFilterOptions) {
    this.name = name;
    this.#allow = new AddressRanges(options.allow);
    this.#deny = new AddressRanges(options.deny);
    this.#trusted = new AddressRanges(options.trusted_proxies);
  }

  /** The client's address: the peer, or the first untrusted hop of a trusted peer's chain. */
  clientAddress(req: RequestEnvelope): string | null {
    let client = req.remoteAddr ?? null;
    if (client === null || !this.#trusted.has(client)) return client;
    const forwarded = req.readHeaders.get("x-forwarded-for");
    if (forwarded === null) return client;
    const hops = forwarded.split(",").slice(-MAX_FORWARDED).map((h) => h.trim());
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(hops[i]);
      // An entry that is not an address ends the chain: what lies left of it cannot be trusted.
      if (hop === null) return client;
      client = hop.toString();
      if (!this.#trusted.has(hop)) return client;
    }
    return client;
  }

  onRequest(req: RequestEnvelope): void {
    const client = this.clientAddress(req);
    const allowed = client !== null && !this.#deny.has(client) &&
      (this.#allow.size === 0 || this.#allow.has(client));
    if (!allowed) {
      throw new GatewayError(403, "ip_denied", "requests from this address are not allowed here");
    }
    req.metadata["client.ip"] = client;
  }
}

/** Build an `ip_filter` middleware (options already checked by the config schema). */
export function createIpFilterMiddleware(config: MiddlewareConfig): Middleware {
  return new IpFilterMiddleware(config.name, config.options as unknown as IpFilterOptions);
}
