import { deepEqual, equal, throws } from "node:assert/strict";
import { H3, Http3Error } from "./errors.ts";
import { QpackDecoder } from "./qpack_decoder.ts";
import { encodeFieldSection } from "./qpack_encoder.ts";
import { ByteCursor, ByteWriter } from "./qpack_primitives.ts";
import { STATIC_TABLE } from "./qpack_static.ts";
import { hex, toHex } from "../../tests/support/hex.ts";

const fields = (list: [string, string][]) => list.map(([name, value]) => ({ name, value }));

Deno.test("qpack: prefixed integers of RFC 7541 Appendix C.1", () => {
  const w = new ByteWriter();
  w.int(10, 5, 0xe0); // C.1.1: 10 on a 5-bit prefix, other bits set
  w.int(1337, 5, 0x00); // C.1.2
  w.int(42, 8, 0x00); // C.1.3
  equal(toHex(w.finish()), "ea1f9a0a2a");
  const c = new ByteCursor(w.finish());
  equal(c.int(5), 10);
  equal(c.int(5), 1337);
  equal(c.int(8), 42);
  equal(c.done, true);
});

Deno.test("qpack: static table of RFC 9204 Appendix A", () => {
  equal(STATIC_TABLE.length, 99);
  deepEqual(STATIC_TABLE[0], [":authority", ""]);
  deepEqual(STATIC_TABLE[17], [":method", "GET"]);
  deepEqual(STATIC_TABLE[25], [":status", "200"]);
  deepEqual(STATIC_TABLE[46], ["content-type", "application/json"]);
  deepEqual(STATIC_TABLE[71], [":status", "500"]);
  deepEqual(STATIC_TABLE[98], ["x-frame-options", "sameorigin"]);
});

Deno.test("qpack: RFC 9204 B.1 literal field line with name reference", () => {
  const d = new QpackDecoder({ maxTableCapacity: 0, maxFieldSectionSize: 4096 });
  deepEqual(
    d.decodeSection(0, hex("0000 510b 2f69 6e64 6578 2e68 746d 6c")),
    fields([[":path", "/index.html"]]),
  );
  equal(d.takeInstructions(), null);
});

Deno.test("qpack: RFC 9204 B.2-B.5 dynamic table, acknowledgments, duplicate, eviction", () => {
  const d = new QpackDecoder({ maxTableCapacity: 220, maxFieldSectionSize: 4096 });
  // B.2: capacity 220, two inserts with static name references.
  d.onEncoderStream(hex("3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d"));
  d.onEncoderStream(hex("c10c 2f73 616d 706c 652f 7061 7468"));
  equal(d.table.insertCount, 2);
  equal(d.table.size, 106);
  deepEqual(
    d.decodeSection(4, hex("0381 10 11")),
    fields([[":authority", "www.example.com"], [":path", "/sample/path"]]),
  );
  // Section Acknowledgment (stream=4).
  equal(toHex(d.takeInstructions()!), "84");
  // B.3: speculative insert with a literal name, acknowledged by Insert Count Increment (1).
  d.onEncoderStream(hex("4a63 7573 746f 6d2d 6b65 790c 6375 7374 6f6d 2d76 616c 7565"));
  equal(d.table.size, 160);
  equal(toHex(d.takeInstructions()!), "01");
  // B.4: duplicate, then a section referencing dynamic and static entries.
  d.onEncoderStream(hex("02"));
  equal(d.table.size, 217);
  deepEqual(
    d.decodeSection(8, hex("0500 80 c1 81")),
    fields([[":authority", "www.example.com"], [":path", "/"], ["custom-key", "custom-value"]]),
  );
  // B.5: insert with a dynamic name reference evicts entry 0.
  d.onEncoderStream(hex("810d 6375 7374 6f6d 2d76 616c 7565 32"));
  equal(d.table.size, 215);
  equal(d.table.get(0), undefined);
  deepEqual(d.table.get(4), { name: "custom-key", value: "custom-value2", size: 55 });
});

Deno.test("qpack: encoder stream bytes may arrive split anywhere", () => {
  const d = new QpackDecoder({ maxTableCapacity: 220, maxFieldSectionSize: 4096 });
  const bytes = hex("3fbd01 c00f 7777 772e 6578 616d 706c 652e 636f 6d");
  for (const b of bytes) d.onEncoderStream(Uint8Array.of(b));
  equal(d.table.insertCount, 1);
  deepEqual(d.table.get(0)?.value, "www.example.com");
});

Deno.test("qpack: with capacity 0 any insertion or dynamic reference is an error", () => {
  const d = new QpackDecoder({ maxTableCapacity: 0, maxFieldSectionSize: 4096 });
  d.onEncoderStream(hex("20")); // Set Dynamic Table Capacity = 0 is allowed
  const e1 = throws(() => d.onEncoderStream(hex("3fbd01")), (err: Http3Error) => {
    equal(err.code, H3.QPACK_ENCODER_STREAM_ERROR);
    equal(err.scope, "connection");
    return true;
  });
  void e1;
  // Required Insert Count 2 on a decoder that allows no dynamic table.
  throws(() => d.decodeSection(4, hex("0381 10 11")), (err: Http3Error) => {
    equal(err.code, H3.QPACK_DECOMPRESSION_FAILED);
    return true;
  });
});

Deno.test("qpack: a section needing unreceived inserts is refused (no blocked streams)", () => {
  const d = new QpackDecoder({ maxTableCapacity: 220, maxFieldSectionSize: 4096 });
  throws(() => d.decodeSection(4, hex("0381 10 11")), (err: Http3Error) => {
    equal(err.code, H3.QPACK_DECOMPRESSION_FAILED);
    return true;
  });
});

Deno.test("qpack: malformed sections are QPACK_DECOMPRESSION_FAILED", () => {
  const d = new QpackDecoder({ maxTableCapacity: 0, maxFieldSectionSize: 4096 });
  for (const bad of ["00", "0000 ff", "0000 5f", "0000 510b 2f69", "0000 ff64", "0000 2f"]) {
    throws(() => d.decodeSection(0, hex(bad)), (err: Http3Error) => {
      equal(err.code, H3.QPACK_DECOMPRESSION_FAILED, bad);
      return true;
    });
  }
});

Deno.test("qpack: a section over the field section size limit is H3_EXCESSIVE_LOAD", () => {
  const d = new QpackDecoder({ maxTableCapacity: 0, maxFieldSectionSize: 100 });
  const section = encodeFieldSection([["x-big", "v".repeat(80)]]);
  throws(() => d.decodeSection(0, section), (err: Http3Error) => {
    equal(err.code, H3.EXCESSIVE_LOAD);
    equal(err.scope, "stream");
    return true;
  });
});

Deno.test("qpack: the static-only encoder round-trips through the decoder", () => {
  const list: [string, string][] = [
    [":status", "200"], // exact static match
    ["content-type", "application/json"], // exact
    ["content-type", "application/fhir+json"], // name reference
    ["x-request-id", "5f1c-äbc"], // literal name, Latin-1 value
    ["authorization", "Bearer secret"], // name reference, no N bit (quic-go refuses it)
    ["set-cookie", "a=1"],
  ];
  const section = encodeFieldSection(list);
  // Required Insert Count 0, Base 0, then ":status: 200" as static index 25 (0xc0 | 25).
  equal(toHex(section.subarray(0, 3)), "0000d9");
  // `authorization` is static name 84: 0101 1111, then 84 - 15 = 69 (0x45). No N bit (0x20).
  const auth = encodeFieldSection([["authorization", "Bearer x"]]);
  equal(toHex(auth.subarray(2, 4)), "5f45");
  const d = new QpackDecoder({ maxTableCapacity: 0, maxFieldSectionSize: 4096 });
  deepEqual(d.decodeSection(0, section), fields(list));
});

Deno.test("qpack: the peer's Set Dynamic Table Capacity above our maximum is refused", () => {
  const d = new QpackDecoder({ maxTableCapacity: 100, maxFieldSectionSize: 4096 });
  throws(() => d.onEncoderStream(hex("3fbd01")), /exceeds our maximum/);
});
