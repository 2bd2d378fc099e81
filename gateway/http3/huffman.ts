/**
 * The static Huffman code of HPACK (RFC 7541 Appendix B), which QPACK uses for string literals.
 *
 * The code is canonical: codes of one length are consecutive in symbol order and each length
 * starts where the previous one ended, shifted. So the table is kept as the code length of every
 * symbol (0-255, and 256 = EOS) and the codes are derived from it; the tests check derived codes
 * against the hex values printed in the RFC.
 */

// deno-fmt-ignore
const LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0-15
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 16-31
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, //  !"#$%&'()*+,-./
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, // 0-9 :;<=>?
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // @A-O
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, // P-Z [\]^_
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, // `a-o
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, // p-z {|}~ DEL
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128-143
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144-159
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160-175
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176-191
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192-207
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208-223
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224-239
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240-255
  30, // EOS
];

/** The EOS symbol, which must never appear in a decoded string. */
const EOS = 256;

/** Code of each symbol, right-aligned in `length` bits. */
export const HUFFMAN_CODES: readonly number[] = canonicalCodes(LENGTHS);
/** Length in bits of each symbol's code. */
export const HUFFMAN_LENGTHS: readonly number[] = LENGTHS;

function canonicalCodes(lengths: readonly number[]): number[] {
  const order = lengths.map((len, sym) => ({ len, sym }))
    .sort((a, b) => a.len - b.len || a.sym - b.sym);
  const codes = new Array<number>(lengths.length);
  let code = 0;
  let prevLen = order[0].len;
  for (const { len, sym } of order) {
    code *= 2 ** (len - prevLen);
    prevLen = len;
    codes[sym] = code;
    code++;
  }
  return codes;
}

// Decoding trie: node i has children at CHILD[2i] (bit 0) and CHILD[2i+1] (bit 1); a negative
// child -(sym + 1) is a leaf.
const CHILD = buildTrie();

function buildTrie(): Int32Array {
  const child = new Int32Array(2 * 512);
  let nodes = 1;
  for (let sym = 0; sym <= EOS; sym++) {
    const len = LENGTHS[sym];
    const code = HUFFMAN_CODES[sym];
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const bit = Math.floor(code / 2 ** i) & 1;
      const slot = 2 * node + bit;
      if (i === 0) {
        child[slot] = -(sym + 1);
      } else {
        if (child[slot] === 0) child[slot] = nodes++;
        node = child[slot];
      }
    }
  }
  return child;
}

/** Number of bytes the Huffman encoding of `bytes` takes. */
export function huffmanEncodedLength(bytes: Uint8Array): number {
  let bits = 0;
  for (const b of bytes) bits += LENGTHS[b];
  return Math.ceil(bits / 8);
}

/** Huffman-encode `bytes`, padding the last byte with the most significant bits of EOS (ones). */
export function huffmanEncode(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(huffmanEncodedLength(bytes));
  let acc = 0;
  let bits = 0;
  let pos = 0;
  for (const b of bytes) {
    const len = LENGTHS[b];
    acc = acc * 2 ** len + HUFFMAN_CODES[b];
    bits += len;
    while (bits >= 8) {
      const shift = 2 ** (bits - 8);
      const byte = Math.floor(acc / shift);
      out[pos++] = byte;
      acc -= byte * shift;
      bits -= 8;
    }
  }
  if (bits > 0) out[pos++] = (acc << (8 - bits)) | (0xff >> bits);
  return out;
}

/** Why a Huffman string was refused. */
export class HuffmanError extends Error {}

/**
 * Decode a Huffman-encoded string. Throws HuffmanError on EOS inside the string, padding longer
 * than 7 bits, or padding that is not the prefix of EOS (RFC 7541 §5.2).
 */
export function huffmanDecode(bytes: Uint8Array): Uint8Array {
  // Every symbol takes at least 5 bits, so 8/5 of the input bounds the output.
  const out = new Uint8Array(Math.floor((bytes.length * 8) / 5));
  let pos = 0;
  let node = 0;
  let pendingBits = 0;
  let pendingOnes = true;
  for (const byte of bytes) {
    for (let i = 7; i >= 0; i--) {
      const bit = (byte >> i) & 1;
      const next = CHILD[2 * node + bit];
      pendingBits++;
      if (bit === 0) pendingOnes = false;
      if (next < 0) {
        const sym = -next - 1;
        if (sym === EOS) throw new HuffmanError("EOS symbol inside a Huffman string");
        out[pos++] = sym;
        node = 0;
        pendingBits = 0;
        pendingOnes = true;
      } else {
        node = next;
      }
    }
  }
  if (pendingBits > 7) throw new HuffmanError("Huffman padding longer than 7 bits");
  if (!pendingOnes) throw new HuffmanError("Huffman padding is not a prefix of EOS");
  return out.subarray(0, pos);
}
