import assert from "node:assert/strict";
import { compareVersions } from "./semver.ts";

Deno.test("semver: precedence of releases and pre-releases (SemVer 2.0.0 §11)", () => {
  // The example chain of §11.4, then core numbers compared as numbers.
  const ordered = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.2.0",
    "1.10.0",
    "2.0.0",
    "10.0.0",
  ];
  for (let i = 0; i < ordered.length; i++) {
    for (let j = 0; j < ordered.length; j++) {
      const c = compareVersions(ordered[i], ordered[j]);
      assert.equal(Math.sign(c), Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
    }
  }
  assert.equal(compareVersions("1.2.3+build.5", "1.2.3"), 0);
  assert.equal(compareVersions("v1.2.3", "1.2.3"), 0);
  assert.ok(compareVersions("99999999999999999999.0.0", "99999999999999999998.0.0") > 0);
  assert.throws(() => compareVersions("1.2", "1.2.0"), /not a release version/);
});
