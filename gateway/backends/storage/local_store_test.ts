import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { GatewayError } from "../../errors.ts";
import { LocalStore } from "./local_store.ts";
import { readSidecar, sidecarPath, writeSidecar } from "./sidecar.ts";
import type { WriteOptions } from "./store.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function opts(over: Partial<WriteOptions> = {}): WriteOptions {
  return {
    contentType: "text/plain",
    overwrite: true,
    signal: new AbortController().signal,
    length: null,
    ...over,
  };
}

async function withStore(fn: (store: LocalStore, root: string) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "gw-local-store-" });
  try {
    await fn(new LocalStore(`${root}/objects`), `${root}/objects`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

async function files(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
}

async function text(store: LocalStore, path: string): Promise<string | null> {
  const read = await store.read(path);
  return read ? await new Response(read.body).text() : null;
}

Deno.test("local store: writes, reads with the sidecar's type, replaces, removes", async () => {
  await withStore(async (store, root) => {
    const first = await store.write("a/b.txt", bytes("one"), opts({ overwrite: false }));
    assertEquals(first.created, true);
    assertEquals(first.size, 3);
    const info = await store.head("a/b.txt");
    assertEquals(info?.contentType, "text/plain");
    assertEquals(info?.sha256, first.sha256);
    assertEquals(info?.etag, `"${first.sha256}"`);
    const second = await store.write("a/b.txt", bytes("two!"), opts({ contentType: "x/y" }));
    assertEquals(second.created, false);
    assertEquals(await text(store, "a/b.txt"), "two!");
    assertEquals((await store.head("a/b.txt"))?.contentType, "x/y");
    assertEquals(await files(`${root}/a`), [".b.txt.meta.json", "b.txt"]);
    assertEquals(await store.remove("a/b.txt"), true);
    assertEquals(await store.remove("a/b.txt"), false);
    assertEquals(await files(`${root}/a`), []);
    assertEquals(await store.read("a/b.txt"), null);
  });
});

Deno.test("local store: a crash between the sidecar and the data rename keeps the old type", async () => {
  await withStore(async (store, root) => {
    await store.write("doc.json", bytes('{"v":1}'), opts({ contentType: "application/json" }));
    const meta = sidecarPath(root, "doc.json");
    const before = await readSidecar(meta);
    // What a replacing writer does before its data rename: new entry first, current entry kept.
    await writeSidecar(meta, {
      ino: 1,
      size: 99,
      sha256: "0".repeat(64),
      content_type: "text/plain",
      stored_at: new Date().toISOString(),
    }, before!.entries[0]);
    const info = await store.head("doc.json");
    assertEquals(info?.contentType, "application/json");
    assertEquals(info?.sha256, before!.entries[0].sha256);
    // A file replaced behind the store's back is not described by the old entry.
    await Deno.writeTextFile(`${root}/doc.json`, "changed by hand, longer");
    const untyped = await store.head("doc.json");
    assertEquals(untyped?.contentType, null);
    assertEquals(untyped?.sha256, undefined);
  });
});

Deno.test("local store: concurrent POSTs of one path: one stored, the others 409", async () => {
  await withStore(async (store, root) => {
    const results = await Promise.allSettled(
      Array.from(
        { length: 8 },
        (_, i) => store.write("race.txt", bytes(`writer ${i}`), opts({ overwrite: false })),
      ),
    );
    const stored = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    assertEquals(stored.length, 1);
    for (const r of refused) assertEquals((r.reason as GatewayError).code, "object_exists");
    assertEquals(await files(root), [".race.txt.meta.json", "race.txt"]);
    assert((await text(store, "race.txt"))!.startsWith("writer "));
  });
});

Deno.test("local store: concurrent PUTs leave data and sidecar describing the same version", async () => {
  await withStore(async (store) => {
    await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) =>
          store.write("put.txt", bytes("v".repeat(i + 1)), opts({ contentType: `x/v${i}` })),
      ),
    );
    const read = await store.read("put.txt");
    const body = await new Response(read!.body).text();
    assertEquals(read!.info.contentType, `x/v${body.length - 1}`);
  });
});

Deno.test("local store: an aborted or failing body leaves nothing behind", async () => {
  await withStore(async (store, root) => {
    const controller = new AbortController();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(1000));
      },
      pull() {
        controller.abort();
        return new Promise(() => {});
      },
    });
    await assertRejects(() =>
      store.write("x/aborted.bin", stream, opts({ signal: controller.signal }))
    );
    const failing = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(1000));
      },
      pull(c) {
        c.error(new Error("connection reset"));
      },
    });
    await assertRejects(() => store.write("x/failed.bin", failing, opts()), /connection reset/);
    assertEquals(await files(`${root}/x`), []);
  });
});

Deno.test("local store: a path through an existing file is a 409 conflict", async () => {
  await withStore(async (store) => {
    await store.write("file", bytes("x"), opts());
    const err = await assertRejects(() => store.write("file/below.txt", bytes("y"), opts()));
    assertEquals((err as GatewayError).code, "storage_path_conflict");
    assertEquals(await store.read("file/below.txt"), null);
  });
});
