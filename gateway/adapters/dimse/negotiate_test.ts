/**
 * The transfer syntax an SCP accepts per presentation context: services take uncompressed Little
 * Endian; storage received follows the requestor's preference (compressed data stored as sent);
 * storage the requestor takes the SCP role for (C-GET sub-operations we send) prefers uncompressed.
 */
import { assertEquals } from "../../../tests/assert.ts";
import { TS } from "../../dicom/mod.ts";
import { chooseSyntax } from "./negotiate.ts";

const JPEG_LOSSLESS = "1.2.840.10008.1.2.4.70";
const JPEG_LS = "1.2.840.10008.1.2.4.80";
const RLE = "1.2.840.10008.1.2.5";
/** What DCMTK `dcmqrscp -xs` (and `storescu -xs`) lists in one context. */
const DCMTK_XS = [JPEG_LOSSLESS, TS.explicitLE, TS.explicitBE, TS.implicitLE];
/** What DCMTK proposes by default: uncompressed, Explicit VR Little Endian first. */
const DCMTK_DEFAULT = [TS.explicitLE, TS.explicitBE, TS.implicitLE];

Deno.test("chooseSyntax receive: the requestor's first listed syntax, stored as received", () => {
  assertEquals(chooseSyntax(DCMTK_XS, "receive"), JPEG_LOSSLESS);
  assertEquals(chooseSyntax([RLE, JPEG_LS, TS.explicitLE], "receive"), RLE);
  assertEquals(chooseSyntax([JPEG_LS], "receive"), JPEG_LS);
  assertEquals(chooseSyntax(DCMTK_DEFAULT, "receive"), TS.explicitLE);
  // Uncompressed first: the requestor prefers to send uncompressed (it can decompress).
  assertEquals(chooseSyntax([TS.explicitLE, JPEG_LOSSLESS], "receive"), TS.explicitLE);
  // Either uncompressed Little Endian syntax first: Explicit is taken when proposed.
  assertEquals(chooseSyntax([TS.implicitLE, TS.explicitLE, RLE], "receive"), TS.explicitLE);
  assertEquals(chooseSyntax([TS.implicitLE, RLE], "receive"), TS.implicitLE);
  // Deflated never; Explicit VR Big Endian only when nothing else is proposed.
  assertEquals(chooseSyntax([TS.deflatedLE, TS.explicitBE, JPEG_LS], "receive"), JPEG_LS);
  assertEquals(chooseSyntax([TS.deflatedLE, TS.explicitBE], "receive"), TS.explicitBE);
  assertEquals(chooseSyntax([TS.deflatedLE], "receive"), undefined);
});

Deno.test("chooseSyntax send and service: uncompressed Little Endian first", () => {
  assertEquals(chooseSyntax(DCMTK_XS, "send"), TS.explicitLE);
  assertEquals(chooseSyntax([JPEG_LOSSLESS, TS.implicitLE], "send"), TS.implicitLE);
  assertEquals(chooseSyntax([JPEG_LS], "send"), JPEG_LS);
  assertEquals(chooseSyntax([TS.deflatedLE, RLE], "send"), RLE);
  assertEquals(chooseSyntax(DCMTK_XS, "service"), TS.explicitLE);
  assertEquals(chooseSyntax([TS.implicitLE], "service"), TS.implicitLE);
  assertEquals(chooseSyntax([JPEG_LOSSLESS, TS.explicitBE], "service"), undefined);
});
