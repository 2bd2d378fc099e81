/** AddressRanges: strict parsing, IPv4 and IPv6 ranges, IPv4-mapped IPv6 addresses. */
import { assertEquals, assertThrows } from "../../tests/assert.ts";
import { AddressRanges, rangeProblem } from "./address_ranges.ts";

Deno.test("address ranges: strict entries, both families, mapped addresses", () => {
  for (const ok of ["10.0.0.0/8", "192.168.1.7", "::1", "fd00::/8", "[::1]", "0.0.0.0/0"]) {
    assertEquals(rangeProblem(ok), null, ok);
  }
  for (const bad of ["1.2.3", "10.0.0.0/33", "fd00::/129", "010.0.0.1", "0x7f.0.0.1", "", "a/8"]) {
    assertEquals(typeof rangeProblem(bad), "string", bad);
  }
  assertThrows(() => new AddressRanges(["10.0.0.0/8", "nope"]), /nope/);
  const r = new AddressRanges(["10.0.0.0/8", "fd00::/8", "192.168.1.7"]);
  assertEquals(r.has("10.200.3.4"), true);
  assertEquals(r.has("::ffff:10.1.2.3"), true);
  assertEquals(r.has("11.0.0.1"), false);
  assertEquals(r.has("fd12::5"), true);
  assertEquals(r.has("fe80::1"), false);
  assertEquals(r.has("192.168.1.7"), true);
  assertEquals(r.has("192.168.1.8"), false);
  assertEquals(r.has("not an address"), false);
});
