/**
 * InstanceStore: spooled instances land at `<study>/<instance>.dcm` with no temporary file left;
 * an aborted spool leaves nothing; a storage failure is reported and leaves nothing either.
 */
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { InstanceStore } from "./storage.ts";

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isDirectory) out.push(...(await names(`${dir}/${e.name}`)).map((n) => `${e.name}/${n}`));
    else out.push(e.name);
  }
  return out.sort();
}

Deno.test("InstanceStore: spool, commit, abort, write", async () => {
  const dir = await Deno.makeTempDir({ prefix: "instance-store-" });
  try {
    const store = new InstanceStore(`${dir}/in`);
    const spool = store.spool("1.2.3.4")!;
    spool.write(new Uint8Array([1, 2]));
    spool.write(new Uint8Array([3]));
    assertEquals(await store.commit(spool, "1.2.3", "1.2.3.4"), `${dir}/in/1.2.3/1.2.3.4.dcm`);
    assertEquals(await Deno.readFile(`${dir}/in/1.2.3/1.2.3.4.dcm`), new Uint8Array([1, 2, 3]));

    const aborted = store.spool("1.2.3.5")!;
    aborted.write(new Uint8Array([9]));
    aborted.abort();
    await store.write("", "1.2.3.6", new Uint8Array(100_000).fill(7));
    assertEquals((await Deno.readFile(`${dir}/in/unknown-study/1.2.3.6.dcm`)).length, 100_000);
    assertEquals(await names(`${dir}/in`), ["1.2.3/1.2.3.4.dcm", "unknown-study/1.2.3.6.dcm"]);

    assertEquals(store.spool("../../etc/passwd"), undefined);
    assertEquals(store.spool(".."), undefined);
    // A study UID that is no UID files the instance under unknown-study, never outside the root.
    const odd = store.spool("1.2.3.7")!;
    odd.write(new Uint8Array([5]));
    await store.commit(odd, "..", "1.2.3.7");
    assertEquals(await Deno.readFile(`${dir}/in/unknown-study/1.2.3.7.dcm`), new Uint8Array([5]));
    await assertRejects(() => store.write("1.2", "x/../y", new Uint8Array(1)), /invalid SOP/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("InstanceStore: a storage_dir that cannot be written fails the commit, leaves nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "instance-store-" });
  try {
    await Deno.writeTextFile(`${dir}/file`, "not a directory");
    const store = new InstanceStore(`${dir}/file`);
    const spool = store.spool("1.2.3.4")!;
    spool.write(new Uint8Array([1]));
    await assertRejects(
      () => store.commit(spool, "1.2.3", "1.2.3.4"),
      /conflicts with an existing file|Not a directory|ENOTDIR|os error 20/,
    );
    assertEquals(await names(dir), ["file"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
