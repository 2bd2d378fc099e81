/**
 * PasswordChecks: at most MAX_ACTIVE verifications run and MAX_WAITING wait, the rest are refused
 * at once with 503 and Retry-After; results are remembered; an unknown user never matches.
 */
import bcrypt from "bcryptjs";
import { assertEquals } from "../../../tests/assert.ts";
import { GatewayError } from "../../errors.ts";
import { MAX_ACTIVE, MAX_WAITING, PasswordChecks } from "./password_checks.ts";
import { basicCredential, bearerToken } from "./credentials.ts";

Deno.test("password checks: bounded concurrency, remembered results, unknown users never match", async () => {
  const hash = bcrypt.hashSync("right", 4);
  const checks = new PasswordChecks();
  const tries = Array.from(
    { length: MAX_ACTIVE + MAX_WAITING + 20 },
    (_, i) => checks.verify("ada", `wrong-${i}`, hash).then((ok) => ok, (e) => e),
  );
  const outcomes = await Promise.all(tries);
  const refused = outcomes.filter((o) => o instanceof GatewayError) as GatewayError[];
  assertEquals(refused.length, 20);
  assertEquals([refused[0].status, refused[0].code, refused[0].headers], [
    503,
    "authentication_busy",
    { "retry-after": "1" },
  ]);
  assertEquals(outcomes.filter((o) => o === false).length, MAX_ACTIVE + MAX_WAITING);

  assertEquals(await checks.verify("ada", "right", hash), true);
  // Remembered: the same answer even with a hash that would now say otherwise.
  assertEquals(await checks.verify("ada", "right", hash), true);
  assertEquals(await checks.verify("nobody", "right", undefined), false);
});

Deno.test("credentials: Basic and Bearer parsing refuses what is not one", () => {
  const basic = (text: string) => basicCredential(`Basic ${btoa(text)}`);
  assertEquals(basic("ada:pa:ss"), { user: "ada", password: "pa:ss" });
  assertEquals(basic(":pw"), { problem: "malformed" });
  assertEquals(basic("no-colon"), { problem: "malformed" });
  assertEquals(basicCredential(null), { problem: "missing" });
  assertEquals(basicCredential("Bearer abc"), { problem: "missing" });
  assertEquals(basicCredential("Basic"), { problem: "malformed" });
  assertEquals(basicCredential(`Basic ${"A".repeat(9000)}`), { problem: "malformed" });
  // Not UTF-8: refused rather than guessed.
  assertEquals(basicCredential(`Basic ${btoa("\xff\xfe:x")}`), { problem: "malformed" });
  assertEquals(bearerToken("Bearer abc.def-ghi_"), "abc.def-ghi_");
  assertEquals(bearerToken("bearer   abc=="), "abc==");
  assertEquals(bearerToken("Bearer a b"), null);
  assertEquals(bearerToken(`Bearer ${"a".repeat(9000)}`), null);
});
