import assert from "node:assert/strict";
import { CliError } from "../errors.ts";
import { checkDowngrade, type DowngradeCheck } from "./downgrade.ts";

const base: DowngradeCheck = {
  version: "1.9.0",
  present: { kind: "known", version: "2.0.0" },
  target: "/opt/bin/gateway",
  fromIndex: null,
  allowDowngrade: false,
};

Deno.test("downgrade: an older release replaces a newer one only when named and allowed", () => {
  // Same or newer, nothing known, or nothing there: no objection.
  assert.equal(checkDowngrade({ ...base, version: "2.0.0" }), null);
  assert.equal(checkDowngrade({ ...base, version: "2.0.1" }), null);
  assert.equal(checkDowngrade({ ...base, present: { kind: "unknown" } }), null);
  assert.equal(checkDowngrade({ ...base, present: { kind: "none" } }), null);
  // A pre-release of the installed version is older.
  assert.throws(() => checkDowngrade({ ...base, version: "2.0.0-rc.1" }), CliError);

  // Offered by the index as the latest: refused even with --allow-downgrade.
  const index = "https://mirror/latest/download/latest.json";
  for (const allowDowngrade of [false, true]) {
    assert.throws(
      () => checkDowngrade({ ...base, fromIndex: index, allowDowngrade }),
      (err: CliError) =>
        /the release index https:\/\/mirror\/latest\/download\/latest\.json names 1\.9\.0, older than gateway 2\.0\.0 at \/opt\/bin\/gateway; nothing was installed/
          .test(err.message) && /--version 1\.9\.0 --allow-downgrade/.test(err.hint ?? ""),
    );
  }
  // Named by the user: refused without --allow-downgrade, a note with it.
  assert.throws(
    () => checkDowngrade(base),
    (err: CliError) =>
      err.message ===
        "gateway 2.0.0 at /opt/bin/gateway is newer than 1.9.0; nothing was installed" &&
      /--allow-downgrade/.test(err.hint ?? ""),
  );
  assert.match(checkDowngrade({ ...base, allowDowngrade: true })!, /older 1\.9\.0/);
});
