import { assert, assertEquals } from "../../../tests/assert.ts";
import { isTemporaryName, sweepStaleTemporaries } from "./stale_temporaries.ts";

Deno.test("isTemporaryName: our three temporary names, nothing a client or user could name", () => {
  assert(isTemporaryName(".report.pdf.1a2b3c4d.tmp"), "local store object");
  assert(isTemporaryName(".report.pdf.meta.json.1a2b3c4d.tmp"), "local store sidecar");
  assert(
    isTemporaryName(".1.2.840.1.5.0f8e1c2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b.tmp"),
    "DICOM receiver",
  );
  for (const name of ["report.pdf", "a.1a2b3c4d.tmp", ".hidden", ".x.tmp", ".x.1A2B3C4D.tmp"]) {
    assert(!isTemporaryName(name), name);
  }
});

Deno.test("sweepStaleTemporaries: removes old temporaries in every folder, keeps new ones and objects", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/a/b`, { recursive: true });
    const old = new Date(Date.now() - 3_600_000);
    const files = {
      staleTop: `${root}/.x.json.0123abcd.tmp`,
      staleDeep: `${root}/a/b/.y.bin.meta.json.89abcdef.tmp`,
      fresh: `${root}/a/.z.bin.fedcba98.tmp`,
      object: `${root}/a/b/y.bin`,
      hidden: `${root}/a/.keep`,
    };
    for (const path of Object.values(files)) await Deno.writeTextFile(path, "x");
    for (const path of [files.staleTop, files.staleDeep, files.object, files.hidden]) {
      await Deno.utime(path, old, old);
    }
    assertEquals(await sweepStaleTemporaries(root, { olderThanMs: Date.now() - 60_000 }), 2);
    const left = new Set<string>();
    for (const path of Object.values(files)) {
      if (await Deno.stat(path).then(() => true, () => false)) left.add(path);
    }
    assertEquals(left, new Set([files.fresh, files.object, files.hidden]));
    assertEquals(await sweepStaleTemporaries(`${root}/missing`), 0, "a missing root is empty");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
