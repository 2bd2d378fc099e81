/** The acknowledgement codes of each mode and MSH-15/16 condition. */
import { assertEquals } from "../../../tests/assert.ts";
import { ackCodes, isEnhanced } from "./ack_plan.ts";

Deno.test("original mode: one AA/AE/AR", () => {
  assertEquals(ackCodes("message", "", "", "accept"), ["AA"]);
  assertEquals(ackCodes("message", "", "", "error"), ["AE"]);
  assertEquals(ackCodes("message", "", "", "reject"), ["AR"]);
  // ack_mode = "original" ignores MSH-15/16.
  assertEquals(ackCodes("original", "AL", "AL", "accept"), ["AA"]);
});

Deno.test("enhanced mode follows MSH-15 and MSH-16", () => {
  assertEquals(isEnhanced("message", "AL", ""), true);
  assertEquals(ackCodes("message", "AL", "NE", "accept"), ["CA"]);
  assertEquals(ackCodes("message", "AL", "AL", "accept"), ["CA", "AA"]);
  assertEquals(ackCodes("message", "NE", "AL", "error"), ["AE"]);
  assertEquals(ackCodes("message", "ER", "NE", "accept"), []);
  assertEquals(ackCodes("message", "ER", "NE", "reject"), ["CR"]);
  assertEquals(ackCodes("message", "SU", "ER", "error"), ["AE"]);
  assertEquals(ackCodes("message", "", "AL", "accept"), ["CA", "AA"]);
  // A queued message: the commit only.
  assertEquals(ackCodes("message", "AL", "AL", "accept", false), ["CA"]);
  // ack_mode = "enhanced" with neither field set: a commit ACK.
  assertEquals(ackCodes("enhanced", "", "", "accept"), ["CA"]);
});
