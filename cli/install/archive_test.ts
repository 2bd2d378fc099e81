import assert from "node:assert/strict";
import { zipSync } from "fflate";
import { CliError } from "../errors.ts";
import { extractBinary } from "./archive.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("archive: the Windows zip gives gateway.exe, wherever it sits", async () => {
  await withDir(async (dir) => {
    const enc = new TextEncoder();
    await Deno.writeFile(
      `${dir}/rel.zip`,
      zipSync({
        "gateway-1.0.0/README.md": enc.encode("readme"),
        "gateway-1.0.0/bin/gateway.exe": enc.encode("MZ binary"),
      }),
    );
    const name = await extractBinary(`${dir}/rel.zip`, "zip", "gateway.exe", `${dir}/out.exe`);
    assert.equal(name, "gateway-1.0.0/bin/gateway.exe");
    assert.equal(await Deno.readTextFile(`${dir}/out.exe`), "MZ binary");
    await assert.rejects(
      () => extractBinary(`${dir}/rel.zip`, "zip", "gateway", `${dir}/x`),
      /the archive has no gateway/,
    );
    await Deno.writeTextFile(`${dir}/broken.zip`, "not a zip");
    await assert.rejects(
      () => extractBinary(`${dir}/broken.zip`, "zip", "gateway.exe", `${dir}/y`),
      CliError,
    );
  });
});

Deno.test({
  name: "archive: a tar.gz made by tar gives the binary, streamed to the destination",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withDir(async (dir) => {
      await Deno.mkdir(`${dir}/src/gateway-1.0.0`, { recursive: true });
      const binary = new Uint8Array(300_000).map((_, i) => (i * 7) & 0xff);
      await Deno.writeFile(`${dir}/src/gateway-1.0.0/gateway`, binary);
      const tar = await new Deno.Command("tar", {
        args: ["-czf", `${dir}/rel.tar.gz`, "-C", `${dir}/src`, "gateway-1.0.0"],
      }).output();
      assert.equal(tar.code, 0);
      const name = await extractBinary(`${dir}/rel.tar.gz`, "tar.gz", "gateway", `${dir}/gateway`);
      assert.equal(name, "gateway-1.0.0/gateway");
      assert.deepEqual(await Deno.readFile(`${dir}/gateway`), binary);
      await Deno.writeTextFile(`${dir}/bad.tar.gz`, "not gzip");
      await assert.rejects(
        () => extractBinary(`${dir}/bad.tar.gz`, "tar.gz", "gateway", `${dir}/z`),
        /the tar\.gz archive is corrupt/,
      );
    });
  },
});
