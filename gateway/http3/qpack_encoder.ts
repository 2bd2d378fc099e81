/**
 * QPACK encoding of field sections with the static table only (RFC 9204 §4.5): we never insert
 * into the peer's dynamic table, so every section has Required Insert Count 0 and Base 0, and
 * nothing can block. Strings are Huffman-coded when that is shorter.
 */
import { ByteWriter } from "./qpack_primitives.ts";
import { STATIC_EXACT, STATIC_NAME } from "./qpack_static.ts";

/** Encode field lines (names must already be lowercase) into a field section. */
export function encodeFieldSection(fields: Iterable<readonly [string, string]>): Uint8Array {
  const w = new ByteWriter();
  w.byte(0x00); // Required Insert Count = 0
  w.byte(0x00); // S = 0, Delta Base = 0
  for (const [name, value] of fields) encodeFieldLine(w, name, value);
  return w.finish();
}

/**
 * Every line goes out as a static-table index or a literal; none is ever inserted into a dynamic
 * table. The N (never-index) bit of RFC 9204 §7.1.3 is not set, even for Authorization and
 * cookies: it is advice to intermediaries that re-encode, and quic-go's QPACK decoder (Caddy,
 * Traefik and other Go HTTP/3 servers) takes a literal with a name reference and the N bit for a
 * dynamic-table reference and closes the connection (docs/decisions.md).
 */
function encodeFieldLine(w: ByteWriter, name: string, value: string): void {
  const exact = STATIC_EXACT.get(`${name}\0${value}`);
  if (exact !== undefined) {
    w.int(exact, 6, 0xc0); // Indexed Field Line, static: 11xxxxxx
    return;
  }
  const nameIndex = STATIC_NAME.get(name);
  if (nameIndex !== undefined) {
    w.int(nameIndex, 4, 0x50); // Literal With Name Reference, static, N = 0: 0101xxxx
    w.string(value, 7, 0x00);
    return;
  }
  w.string(name, 3, 0x20); // Literal With Literal Name, N = 0: 0010Hxxx
  w.string(value, 7, 0x00);
}
