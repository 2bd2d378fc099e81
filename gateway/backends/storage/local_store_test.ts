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

Deno.test("local store: a received file is placed at a path known only once it is in", async () => {
  await withStore(async (store, root) => {
    const first = store.receive("1.2.3");
    first.write(bytes("part one, "));
    first.write(bytes("part two"));
    // The temporary file is hidden in the root while the object arrives.
    assertEquals((await files(root)).length, 1);
    assert((await files(root))[0].startsWith(".1.2.3."));
    assertEquals(await store.place(first, "study/1.2.3.dcm", false), `${root}/study/1.2.3.dcm`);
    assertEquals(await Deno.readTextFile(`${root}/study/1.2.3.dcm`), "part one, part two");
    // A second one replaces it, durably; nothing temporary is left.
    const second = store.receive("1.2.3");
    second.write(bytes("again"));
    await store.place(second, "study/1.2.3.dcm", true);
    assertEquals(await Deno.readTextFile(`${root}/study/1.2.3.dcm`), "again");
    assertEquals(await files(root), ["study"]);
    assertEquals(await files(`${root}/study`), ["1.2.3.dcm"]);
    // An aborted one leaves nothing.
    const aborted = store.receive("1.2.4");
    aborted.write(bytes("x"));
    aborted.abort();
    assertEquals(await files(root), ["study"]);
  });
});

Deno.test("local store: placing refuses paths out of the root, and a failure leaves nothing", async () => {
  await withStore(async (store, root) => {
    assert(
      (await assertRejects(() => store.receive("../x"), /has a `\/`/)) instanceof
        GatewayError,
    );
    await assertRejects(() => store.receive(".."), /segment/);
    const outside = await Deno.makeTempDir({ prefix: "gw-outside-" });
    try {
      await Deno.mkdir(root, { recursive: true });
      await Deno.symlink(outside, `${root}/link`);
      for (const path of ["../escape.dcm", "link/escape.dcm"]) {
        const file = store.receive("1.2.5");
        file.write(bytes("data"));
        const err = await assertRejects(() => store.place(file, path, false));
        assert(err instanceof GatewayError, String(err));
      }
      assertEquals(await files(outside), []);
      assertEquals(await files(root), ["link"]);
      // A file where a directory must go: a conflict, and the temporary file is gone.
      await Deno.writeTextFile(`${root}/taken`, "");
      const file = store.receive("1.2.6");
      file.write(bytes("data"));
      await assertRejects(
        () => store.place(file, "taken/1.2.6.dcm", false),
        /conflicts/,
      );
      assertEquals(await files(root), ["link", "taken"]);
    } finally {
      await Deno.remove(outside, { recursive: true });
    }
  });
});
