import assert from "node:assert/strict";
import { describeDiskError, diskErrorCode, replaceFile } from "./mod.ts";

Deno.test("diskErrorCode: the code, an os error number, or a cause; nothing else", () => {
  const coded = (code: string) => Object.assign(new Error(code), { code });
  assert.equal(diskErrorCode(coded("ENOSPC")), "ENOSPC");
  assert.equal(diskErrorCode(coded("EDQUOT")), "EDQUOT");
  assert.equal(diskErrorCode(coded("EIO")), "EIO");
  assert.equal(diskErrorCode(coded("EROFS")), "EROFS");
  assert.equal(diskErrorCode(new Error("Read-only file system (os error 30)")), "EROFS");
  assert.equal(diskErrorCode(new Error("wrapped", { cause: coded("ENOSPC") })), "ENOSPC");
  assert.equal(diskErrorCode(coded("EACCES")), undefined);
  assert.equal(diskErrorCode(new Deno.errors.NotFound("gone")), undefined);
  assert.equal(diskErrorCode("ENOSPC"), undefined);
  assert.match(describeDiskError("ENOSPC"), /no space left/);
});

Deno.test("replaceFile: replaces whole; a failed write leaves the old file and no temporary", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/note.json`;
    await replaceFile(path, '{"attempts":1}');
    await replaceFile(path, '{"attempts":2}', { sync: true });
    assert.equal(await Deno.readTextFile(path), '{"attempts":2}');
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    // A temporary directory that does not exist: the write fails, the old note stays whole.
    await assert.rejects(replaceFile(path, "{}", { tmpDir: `${dir}/missing` }));
    assert.equal(await Deno.readTextFile(path), '{"attempts":2}');
    assert.deepEqual((await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name), [
      "note.json",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
