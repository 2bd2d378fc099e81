import { deepEqual, equal, throws } from "node:assert/strict";
import { H3, Http3Error } from "./errors.ts";
import {
  decodeIdPayload,
  encodeFrame,
  encodeGoaway,
  isReserved,
  parseFrameHeader,
} from "./frames.ts";
import { decodeSettings, encodeSettings, SETTING } from "./settings.ts";
import { hex, toHex } from "../../tests/support/hex.ts";

Deno.test("frames: encode and parse frame headers", () => {
  const f = encodeFrame(0x00, new Uint8Array(300));
  equal(toHex(f.subarray(0, 3)), "00412c");
  deepEqual(parseFrameHeader(f, 0), { type: 0, length: 300, headerLength: 3 });
  equal(parseFrameHeader(f.subarray(0, 2), 0), null);
  equal(toHex(encodeGoaway(8)), "070108");
  equal(decodeIdPayload(7, hex("08")), 8);
  throws(() => decodeIdPayload(7, hex("0800")), (e: Http3Error) => e.code === H3.FRAME_ERROR);
});

Deno.test("frames: reserved identifiers are 0x1f * N + 0x21", () => {
  equal(isReserved(0x21), true);
  equal(isReserved(0x40), true);
  equal(isReserved(0x1f * 1000 + 0x21), true);
  equal(isReserved(0x22), false);
  equal(isReserved(0x07), false);
});

Deno.test("settings: we announce QPACK capacity 0, 0 blocked streams and a section limit", () => {
  const frame = encodeSettings({
    qpackMaxTableCapacity: 0,
    qpackBlockedStreams: 0,
    maxFieldSectionSize: 65536,
  });
  // type 4, length 9: (0x01, 0), (0x07, 0), (0x06, 65536)
  equal(toHex(frame), "0409" + "0100" + "0700" + "06" + "80010000");
  const s = decodeSettings(frame.subarray(2));
  deepEqual(s, { qpackMaxTableCapacity: 0, qpackBlockedStreams: 0, maxFieldSectionSize: 65536 });
});

Deno.test("settings: unknown and reserved settings are ignored, defaults apply", () => {
  const s = decodeSettings(hex("2104 33 4000 0100"));
  equal(s.maxFieldSectionSize, Infinity);
  equal(s.qpackMaxTableCapacity, 0);
  equal(SETTING.QPACK_BLOCKED_STREAMS, 7);
});

Deno.test("settings: HTTP/2 identifiers and repeats are H3_SETTINGS_ERROR", () => {
  for (const bad of ["0200", "0400", "0110 0100"]) {
    throws(() => decodeSettings(hex(bad)), (e: Http3Error) => {
      equal(e.code, H3.SETTINGS_ERROR, bad);
      equal(e.scope, "connection");
      return true;
    });
  }
  throws(() => decodeSettings(hex("01")), (e: Http3Error) => e.code === H3.FRAME_ERROR);
});
