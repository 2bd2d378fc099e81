/**
 * IP address ranges (CIDR, IPv4 and IPv6) as configuration writes them, matched with ipaddr.js.
 * Parsing is strict: four-part dotted decimals for IPv4 (no `1.2.3`, no octal or hex parts), a
 * prefix within the address family's bits, a bare address meaning a /32 or /128. An IPv4 address
 * mapped into IPv6 (`::ffff:10.0.0.1`, as dual-stack listeners report it) matches IPv4 ranges.
 */
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Parses an address strictly; null when it is not one. */
export function parseAddress(text: string): Address | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (bare.includes(":") && ipaddr.IPv6.isValid(bare)) return ipaddr.process(bare);
  return null;
}

/** Why `text` is not an address or CIDR range, or null. */
export function rangeProblem(text: string): string | null {
  return parseRange(text) === null
    ? "an IPv4 or IPv6 address, or a CIDR range such as 10.0.0.0/8 or fd00::/8"
    : null;
}

/** A parsed range. */
interface Range {
  address: Address;
  bits: number;
}

function parseRange(text: string): Range | null {
  const slash = text.indexOf("/");
  const address = parseAddress(slash < 0 ? text : text.slice(0, slash));
  if (address === null) return null;
  const max = address.kind() === "ipv4" ? 32 : 128;
  if (slash < 0) return { address, bits: max };
  const bitsText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  const bits = Number(bitsText);
  return bits <= max ? { address, bits } : null;
}

/** A set of ranges; `has` tells whether an address falls in one of them. */
export class AddressRanges {
  readonly #ranges: Range[];

  /** Throws naming the first entry that is not an address or range. */
  constructor(entries: readonly string[]) {
    this.#ranges = entries.map((entry) => {
      const range = parseRange(entry);
      if (range === null) throw new Error(`not an address or CIDR range: ${entry}`);
      return range;
    });
  }

  get size(): number {
    return this.#ranges.length;
  }

  /** True when `address` (text, or parsed) is in one of the ranges; false for a non-address. */
  has(address: string | Address | null): boolean {
    const a = typeof address === "string" ? parseAddress(address) : address;
    if (a === null) return false;
    for (const r of this.#ranges) {
      if (r.address.kind() === a.kind() && a.match(r.address as never, r.bits)) return true;
    }
    return false;
  }
}
