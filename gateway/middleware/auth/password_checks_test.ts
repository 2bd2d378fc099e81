/**
 * PasswordChecks: results are remembered, an unknown user never matches and is checked against a
 * decoy with the parameters of the file's median user, and the per-address hook runs only before
 * a hash; the hash bounds refuse what a gateway cannot afford; credential parsing.
 */
import bcrypt from "bcryptjs";
import { assert, assertEquals, assertMatch } from "../../../tests/assert.ts";
import { basicCredential, bearerToken } from "./credentials.ts";
import { decoyFor, PasswordChecks } from "./password_checks.ts";
import { checkMillis, hashProblem, passwordMatches } from "./password_hash.ts";
import type { PasswordVerifier } from "./password_pool.ts";

/** A verifier on this thread that records the hashes it was asked about. */
function recordingVerifier(): PasswordVerifier & { hashes: string[] } {
  const hashes: string[] = [];
  return {
    hashes,
    verify: (password, hash) => {
      hashes.push(hash);
      return Promise.resolve(passwordMatches(password, hash));
    },
  };
}

Deno.test("password checks: remembered results, the hook before hashing, unknown users never match", async () => {
  const hash = bcrypt.hashSync("right", 4);
  const verifier = recordingVerifier();
  const decoy = decoyFor([hash]);
  const checks = new PasswordChecks(verifier, decoy);
  let spent = 0;
  const spend = () => void spent++;

  assertEquals(await checks.verify("ada", "wrong", hash, spend), false);
  assertEquals(await checks.verify("ada", "right", hash, spend), true);
  assertEquals([spent, verifier.hashes.length], [2, 2]);
  // Remembered: no hash and no spending, for a match and for a mismatch.
  assertEquals(await checks.verify("ada", "right", hash, spend), true);
  assertEquals(await checks.verify("ada", "wrong", hash, spend), false);
  assertEquals([spent, verifier.hashes.length], [2, 2]);

  // An unknown user costs a check against the decoy and never matches, whatever it sends.
  assertEquals(await checks.verify("nobody", "right", undefined, spend), false);
  assertEquals(verifier.hashes.at(-1), decoy);
  assertEquals(spent, 3);

  // A hook that throws refuses the check before anything is hashed.
  const refused = await checks.verify("ada", "third", hash, () => {
    throw new Error("no budget");
  }).catch((e: Error) => e.message);
  assertEquals([refused, verifier.hashes.length], ["no budget", 3]);
});

Deno.test("password checks: the decoy has the scheme and cost of the file's median user", () => {
  const costs = [5, 11, 4, 11, 12];
  const hashes = costs.map((c) => bcrypt.hashSync("pw", c));
  const decoy = decoyFor(hashes);
  assertMatch(decoy, /^\$2b\$11\$[./A-Za-z0-9]{53}$/);
  assertEquals(hashProblem(decoy), null);
  assert(!hashes.some((h) => h.slice(7, 29) === decoy.slice(7, 29)), "a salt of its own");
  assertEquals(bcrypt.getRounds(decoyFor([hashes[0], hashes[2]])), 4); // the lower median

  const argon = "$argon2id$v=19$m=4096,t=2,p=1$c2FsdHNhbHRzYWx0MTZieQ$" +
    "kL6cuYC+LKMTBhougVdQBx7gJfOuvBv0LjdjHJQ1CDE";
  const argonDecoy = decoyFor([argon, argon, hashes[0]]);
  assertMatch(
    argonDecoy,
    /^\$argon2id\$v=19\$m=4096,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
  );
  assertEquals(passwordMatches("pw", argon), true); // written by the reference argon2 CLI
  assertEquals(passwordMatches("pw", argonDecoy), false);
  assertEquals(checkMillis(argonDecoy), checkMillis(argon));
});

Deno.test("password hashes: costs over what the gateway can afford are refused with the figure", () => {
  const salted = "$2y$13$" + "a".repeat(53);
  assertMatch(hashProblem(salted)!, /bcrypt cost 13 is over 12.*about \d+ ms.*htpasswd -B -C 12/);
  assertEquals(hashProblem("$2y$12$" + "a".repeat(53)), null);
  assertMatch(hashProblem("$2y$03$" + "a".repeat(53))!, /cost 3 is below 4/);
  const argon = (m: number, t: number) => `$argon2id$v=19$m=${m},t=${t},p=1$c2FsdHNhbHQ$ZGlnZXN0`;
  assertEquals(hashProblem(argon(19456, 2)), null); // OWASP's first Argon2id setting
  assertEquals(hashProblem(argon(65536, 1)), null);
  assertMatch(hashProblem(argon(65536, 3))!, /memory times passes 196608 is over 65536/);
  assertMatch(hashProblem(argon(131072, 1))!, /memory 131072 KiB is over 65536/);
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
