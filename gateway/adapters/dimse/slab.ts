/**
 * Memory for the small byte arrays of DIMSE messages (command sets, PDU headers, identifiers and
 * matches): views cut from a shared slab instead of an ArrayBuffer each. A new ArrayBuffer costs
 * about 0.3 µs however small, and a C-FIND through the gateway needed about fifteen of them.
 * Slab memory is never reused: a view is valid as long as it is referenced, and a slab is freed
 * once no view of it is left (a kept view keeps its slab, so only small pieces come from here).
 */

/** Size of a slab. */
const SLAB = 64 * 1024;
/** Largest piece cut from a slab; larger ones get memory of their own. */
const MAX_PIECE = 2048;

let slab = new Uint8Array(0);
let used = 0;

/** `n` zeroed bytes: a view of the current slab when small, else fresh memory. */
export function allocate(n: number): Uint8Array {
  if (n > MAX_PIECE) return new Uint8Array(n);
  if (used + n > slab.byteLength) {
    slab = new Uint8Array(SLAB);
    used = 0;
  }
  const out = slab.subarray(used, used + n);
  used += n;
  return out;
}

/** A copy of `bytes` (from allocate). */
export function copyOf(bytes: Uint8Array): Uint8Array {
  const out = allocate(bytes.byteLength);
  out.set(bytes);
  return out;
}
