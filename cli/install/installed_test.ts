import assert from "node:assert/strict";
import { fileSha256, presentGateway, recordInstall } from "./installed.ts";

Deno.test("installed: the version at a target is known only while the binary is unchanged", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gwcli-installed-" });
  try {
    const registry = `${dir}/home/installs.json`;
    const target = `${dir}/bin/gateway`;
    assert.deepEqual(await presentGateway(registry, target), { kind: "none" });
    await Deno.mkdir(`${dir}/bin`);
    await Deno.writeTextFile(target, "gateway 2.0.0\n");
    // A binary gwcli never recorded, and one without a registry at all.
    assert.deepEqual(await presentGateway(registry, target), { kind: "unknown" });
    assert.deepEqual(await presentGateway(null, target), { kind: "unknown" });

    await recordInstall(registry, target, "2.0.0", await fileSha256(target), 0);
    assert.deepEqual(await presentGateway(registry, target), { kind: "known", version: "2.0.0" });
    // The record is per real path: a link to the binary finds it too.
    await Deno.symlink(target, `${dir}/bin/gw`);
    assert.deepEqual(await presentGateway(registry, `${dir}/bin/gw`), {
      kind: "known",
      version: "2.0.0",
    });
    const file = JSON.parse(await Deno.readTextFile(registry));
    assert.equal(
      file.installs[await Deno.realPath(target)].installed_at,
      "1970-01-01T00:00:00.000Z",
    );
    if (Deno.build.os !== "windows") assert.equal((await Deno.stat(registry)).mode! & 0o777, 0o600);

    // Replaced by something else since: unknown again.
    await Deno.writeTextFile(target, "a gateway built from source\n");
    assert.deepEqual(await presentGateway(registry, target), { kind: "unknown" });
    // An unreadable registry is an empty one.
    await Deno.writeTextFile(registry, "{not json");
    assert.deepEqual(await presentGateway(registry, target), { kind: "unknown" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
