import { deepEqual, equal, throws } from "node:assert/strict";
import { encodeVarint, readVarint } from "./varint.ts";
import { hex, toHex } from "../../tests/support/hex.ts";

Deno.test("varint: the examples of RFC 9000 §A.1", () => {
  const cases: [string, number][] = [
    ["c2197c5eff14e88c", 151288809941952652],
    ["9d7f3e7d", 494878333],
    ["7bbd", 15293],
    ["25", 37],
  ];
  for (const [encoded, value] of cases) {
    const r = readVarint(hex(encoded), 0)!;
    equal(r.length, encoded.length / 2);
    if (value <= Number.MAX_SAFE_INTEGER) equal(r.value, value);
    else equal(r.value, Infinity); // beyond 2^53: refused by every limit
  }
  // A two-byte encoding of 37 is valid too.
  deepEqual(readVarint(hex("4025"), 0), { value: 37, length: 2 });
  equal(toHex(encodeVarint(15293)), "7bbd");
  equal(toHex(encodeVarint(494878333)), "9d7f3e7d");
  equal(toHex(encodeVarint(37)), "25");
});

Deno.test("varint: boundaries and truncation", () => {
  for (const v of [0, 63, 64, 16383, 16384, 2 ** 30 - 1, 2 ** 30, Number.MAX_SAFE_INTEGER]) {
    const enc = encodeVarint(v);
    deepEqual(readVarint(enc, 0), { value: v, length: enc.length });
    equal(readVarint(enc.subarray(0, enc.length - 1), 0), null);
  }
  throws(() => encodeVarint(-1), RangeError);
});
