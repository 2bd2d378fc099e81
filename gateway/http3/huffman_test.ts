import { deepEqual, equal, throws } from "node:assert/strict";
import {
  HUFFMAN_CODES,
  HUFFMAN_LENGTHS,
  huffmanDecode,
  huffmanEncode,
  HuffmanError,
} from "./huffman.ts";
import { hex, toHex } from "../../tests/support/hex.ts";

const text = (s: string) => new TextEncoder().encode(s);

Deno.test("huffman: derived codes match the hex column of RFC 7541 Appendix B", () => {
  const rows: [number, number, number][] = [
    [0, 0x1ff8, 13],
    [1, 0x7fffd8, 23],
    [9, 0xffffea, 24],
    [10, 0x3ffffffc, 30],
    [32, 0x14, 6],
    [48, 0x0, 5],
    [58, 0x5c, 7],
    [92, 0x7fff0, 19],
    [127, 0xffffffc, 28],
    [128, 0xfffe6, 20],
    [195, 0x7fff1, 19],
    [199, 0x1ffffec, 25],
    [203, 0x7ffffde, 27],
    [220, 0xffffffd, 28],
    [255, 0x3ffffee, 26],
    [256, 0x3fffffff, 30],
  ];
  for (const [sym, code, len] of rows) {
    equal(HUFFMAN_LENGTHS[sym], len, `length of ${sym}`);
    equal(HUFFMAN_CODES[sym], code, `code of ${sym}`);
  }
});

// Strings and their Huffman encodings from RFC 7541 Appendix C.4 and C.6.
const EXAMPLES: [string, string][] = [
  ["www.example.com", "f1e3 c2e5 f23a 6ba0 ab90 f4ff"], // C.4.1
  ["no-cache", "a8eb 1064 9cbf"], // C.4.2
  ["custom-key", "25a8 49e9 5ba9 7d7f"], // C.4.3
  ["custom-value", "25a8 49e9 5bb8 e8b4 bf"], // C.4.3
  ["302", "6402"], // C.6.1
  ["private", "aec3 771a 4b"], // C.6.1
  ["Mon, 21 Oct 2013 20:13:21 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff"],
  ["https://www.example.com", "9d29 ad17 1863 c78f 0b97 c8e9 ae82 ae43 d3"], // C.6.1
  ["307", "640e ff"], // C.6.2
  ["Mon, 21 Oct 2013 20:13:22 GMT", "d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff"],
  ["gzip", "9bd9 ab"], // C.6.3
  [
    "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
    "94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 " +
    "65c0 03ed 4ee5 b106 3d50 07",
  ], // C.6.3
];

Deno.test("huffman: encodes the strings of RFC 7541 Appendix C.4 and C.6", () => {
  for (const [plain, encoded] of EXAMPLES) {
    equal(toHex(huffmanEncode(text(plain))), toHex(hex(encoded)), plain);
  }
});

Deno.test("huffman: decodes the strings of RFC 7541 Appendix C.4 and C.6", () => {
  for (const [plain, encoded] of EXAMPLES) {
    equal(new TextDecoder().decode(huffmanDecode(hex(encoded))), plain);
  }
});

Deno.test("huffman: every byte value round-trips", () => {
  const all = new Uint8Array(512);
  for (let i = 0; i < all.length; i++) all[i] = (i * 7) & 0xff;
  deepEqual(huffmanDecode(huffmanEncode(all)), all);
  deepEqual(huffmanDecode(new Uint8Array(0)), new Uint8Array(0));
});

Deno.test("huffman: refuses EOS, long padding and padding that is not ones", () => {
  // EOS (30 ones) followed by padding: a decoder must reject the EOS symbol.
  throws(() => huffmanDecode(hex("ffff ffff")), HuffmanError);
  // "0" is 00000; 8 bits of ones after it are padding longer than 7 bits.
  throws(() => huffmanDecode(hex("07 ff")), /longer than 7 bits/);
  // "0" then padding 000: not a prefix of EOS.
  throws(() => huffmanDecode(hex("00")), /not a prefix of EOS/);
});
