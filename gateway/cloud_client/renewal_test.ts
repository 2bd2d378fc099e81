import assert from "node:assert/strict";
import { renewalTime } from "./renewal.ts";
import { testPayload } from "../../tests/support/machine_tokens.ts";

const DAY = 86_400_000;

Deno.test("renewalTime: when a third of the token's life is left (from iat to expires_at)", () => {
  const issued = Date.UTC(2030, 0, 1);
  const thirty = testPayload({ iatMs: issued, lifeMs: 30 * DAY });
  assert.equal(renewalTime(thirty), issued + 20 * DAY);
  const three = testPayload({ iatMs: issued, lifeMs: 3 * DAY });
  assert.equal(renewalTime(three), issued + 2 * DAY);
});

Deno.test("renewalTime: without an iat claim the SPEC's 30-day lifetime is assumed", () => {
  const p = testPayload({ iatMs: Date.UTC(2030, 0, 1) });
  const [h, claims, s] = p.machine_token.split(".");
  const decoded = JSON.parse(atob(claims.replace(/-/g, "+").replace(/_/g, "/")));
  delete decoded.iat;
  const noIat = { ...p, machine_token: `${h}.${btoa(JSON.stringify(decoded))}.${s}` };
  assert.equal(renewalTime(noIat), Date.parse(p.expires_at) - 10 * DAY);
});

Deno.test("renewalTime: renew_before_days sets the point, never before the token was issued", () => {
  const issued = Date.UTC(2030, 0, 1);
  const thirty = testPayload({ iatMs: issued, lifeMs: 30 * DAY });
  assert.equal(renewalTime(thirty, 29 * DAY), issued + 1 * DAY);
  assert.equal(renewalTime(thirty, 2 * DAY), issued + 28 * DAY);
  assert.equal(renewalTime(thirty, 40 * DAY), issued, "not before it was issued");
});
