import assert from "node:assert/strict";
import {
  isGroupOrWorldAccessible,
  parentOf,
  readTextIfExists,
  removeIfExists,
  writeFileAtomic,
} from "./files.ts";

const unix = Deno.build.os !== "windows";

Deno.test("files: writeFileAtomic creates the directory 0700 and the file 0600, replaces atomically", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/nested/dir/file.json`;
    const oldUmask = unix ? Deno.umask(0o000) : 0;
    try {
      await writeFileAtomic(path, "one");
    } finally {
      if (unix) Deno.umask(oldUmask);
    }
    assert.equal(await Deno.readTextFile(path), "one");
    if (unix) {
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600, "not widened by a 000 umask");
      assert.equal((await Deno.stat(`${root}/nested/dir`)).mode! & 0o777, 0o700);
      assert.equal(await isGroupOrWorldAccessible(path), false);
    }
    await writeFileAtomic(path, new TextEncoder().encode("two"));
    assert.equal(await Deno.readTextFile(path), "two");
    assert.deepEqual([...Deno.readDirSync(`${root}/nested/dir`)].map((e) => e.name), ["file.json"]);
    if (unix) {
      await Deno.chmod(path, 0o644);
      assert.equal(await isGroupOrWorldAccessible(path), true);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("files: a failed write leaves no temporary file and the old content", async () => {
  const root = await Deno.makeTempDir();
  try {
    const path = `${root}/target`;
    await writeFileAtomic(path, "old");
    await Deno.mkdir(`${root}/blocker`);
    // Renaming a file over a directory fails: the temporary file must be cleaned up.
    await assert.rejects(() => writeFileAtomic(`${root}/blocker`, "x"));
    assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name).sort(), ["blocker", "target"]);
    assert.equal(await Deno.readTextFile(path), "old");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("files: readTextIfExists, removeIfExists, parentOf", async () => {
  const root = await Deno.makeTempDir();
  try {
    assert.equal(await readTextIfExists(`${root}/missing`), undefined);
    await Deno.writeTextFile(`${root}/x`, "hi");
    assert.equal(await readTextIfExists(`${root}/x`), "hi");
    assert.equal(await removeIfExists(`${root}/x`), true);
    assert.equal(await removeIfExists(`${root}/x`), false);
    assert.equal(parentOf("/a/b/c"), "/a/b");
    assert.equal(parentOf("/c"), "/");
    assert.equal(parentOf("c"), ".");
    assert.equal(parentOf("C:\\a\\b"), "C:\\a");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
