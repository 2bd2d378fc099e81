/**
 * Request-path writers on a full (or read-only) disk, each on a small tmpfs the test mounts: the
 * one request that needed the disk gets 507 `insufficient_storage` with nothing half-written,
 * every other request and pipeline is served, and writes succeed again once the disk has room.
 * Writers: a tee's spool file (`spool_threshold`, in `TMPDIR`), the `storage` backend's local
 * root, and the generated management token (kept in memory, saved on a later reload).
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ECHO_PIPELINE, startTestGateway, startUpstream } from "./harness.ts";
import {
  type Filler,
  fillFilesystem,
  freePort,
  isCi,
  mountSmallFilesystem,
  startGateway,
} from "./support/mod.ts";
import { listFiles, storageConfig } from "./storage_support.ts";
import { resolveManagementToken } from "../gateway/management/mod.ts";

/** Mounting needs root (CI runs as root); elsewhere these tests are skipped, in CI they must run. */
const NO_MOUNT = Deno.uid() !== 0 && !isCi();

Deno.test({
  name: "disk full: a tee's spool file that does not fit is 507 for that request only",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024);
    if ("reason" in small) throw new Error(small.reason);
    const upstream = startUpstream(() => new Response("ok"));
    const port = freePort();
    const gw = await startGateway({
      configText: `
[network.main]
bind = "127.0.0.1"
port = ${port}
[management]
bind = "127.0.0.1"
port = ${freePort()}
[proxy.content_limits]
spool_threshold = 65536
[endpoints.tee]
service = "http"
[endpoints.tee.options]
path_prefix = "/tee"
[backends.primary]
service = "http"
[backends.primary.options]
base_url = "${upstream.url}/primary"
[backends.copy]
service = "http"
[backends.copy.options]
base_url = "${upstream.url}/copy"
[pipelines.tee]
endpoints = ["tee"]
backends = ["primary", "copy"]
` + ECHO_PIPELINE,
      // Where the gateway spools: the small disk.
      env: { TMPDIR: small.dir },
    });
    try {
      // 2 MiB: past spool_threshold, and more than the 1 MiB disk holds.
      const big = await fetch(`http://127.0.0.1:${port}/tee/upload`, {
        method: "POST",
        body: new Uint8Array(2 * 1024 * 1024).fill(0x41),
      });
      const error = (await big.json()).error;
      assertEquals([big.status, error?.code], [507, "insufficient_storage"]);
      assertMatch(error.message, /spool/);
      assertEquals(upstream.received.length, 0, "nothing was sent to either destination");
      assertEquals(await listFiles(small.dir), [], "no spool file left behind");
      // The same pipeline with a body that fits in memory, and another pipeline: served.
      const smallBody = await fetch(`http://127.0.0.1:${port}/tee/note`, {
        method: "POST",
        body: "a small body",
      });
      assertEquals(smallBody.status, 200);
      await smallBody.body?.cancel();
      const echo = await fetch(`http://127.0.0.1:${port}/echo/ping`);
      assertEquals(echo.status, 200);
      await echo.body?.cancel();
      // A body that fits on the disk is spooled and reaches both.
      const fits = await fetch(`http://127.0.0.1:${port}/tee/upload`, {
        method: "POST",
        body: new Uint8Array(256 * 1024).fill(0x42),
      });
      assertEquals(fits.status, 200);
      await fits.body?.cancel();
    } finally {
      await gw.stop();
      await upstream.stop();
      await small.unmount();
    }
  },
});

Deno.test({
  name: "disk full: the storage backend's local root answers 507 on a full or read-only disk",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024);
    if ("reason" in small) throw new Error(small.reason);
    const root = `${small.dir}/store`;
    const gw = await startTestGateway(
      storageConfig(`root = "${root}"\nread_pattern = "{path}"\nwrite_pattern = "{path}"`) +
        ECHO_PIPELINE,
    );
    let filler: Filler | undefined;
    try {
      const first = await fetch(`${gw.url}/files/kept.txt`, { method: "PUT", body: "kept" });
      assertEquals(first.status, 201);
      await first.body?.cancel();
      filler = await fillFilesystem(small.dir);
      const full = await fetch(`${gw.url}/files/a/new.bin`, {
        method: "PUT",
        body: new Uint8Array(128 * 1024),
      });
      assertEquals([full.status, (await full.json()).error.code], [507, "insufficient_storage"]);
      // Reads go on; nothing half-written is visible or left.
      const read = await fetch(`${gw.url}/files/kept.txt`);
      assertEquals([read.status, await read.text()], [200, "kept"]);
      const echo = await fetch(`${gw.url}/echo/ping`);
      assertEquals(echo.status, 200);
      await echo.body?.cancel();
      assertEquals(
        (await listFiles(root)).filter((f) => f.endsWith(".tmp")),
        [],
        "no temporary file left behind",
      );
      await filler.free();
      filler = undefined;

      // A file system remounted read-only after errors: 507 as well, not a 500.
      await small.readOnly(true);
      try {
        const ro = await fetch(`${gw.url}/files/b.txt`, { method: "PUT", body: "b" });
        const body = await ro.json();
        assertEquals([ro.status, body.error.code], [507, "insufficient_storage"]);
        assertMatch(body.error.message, /EROFS/);
        const stillRead = await fetch(`${gw.url}/files/kept.txt`);
        assertEquals(stillRead.status, 200);
        await stillRead.body?.cancel();
      } finally {
        await small.readOnly(false);
      }
      const again = await fetch(`${gw.url}/files/a/new.bin`, { method: "PUT", body: "room" });
      assertEquals(again.status, 201);
      await again.body?.cancel();
    } finally {
      await filler?.free();
      await gw.stop();
      await small.unmount();
    }
  },
});

Deno.test({
  name: "disk full: a generated management token that cannot be saved is kept, saved later",
  ignore: NO_MOUNT,
  fn: async () => {
    const small = await mountSmallFilesystem(1024, { inodes: 64 });
    if ("reason" in small) throw new Error(small.reason);
    const stateDir = `${small.dir}/state`;
    await Deno.mkdir(stateDir);
    let filler: Filler | undefined = await fillFilesystem(small.dir, "inodes");
    try {
      const env = () => undefined;
      const held = await resolveManagementToken({ env, stateDir });
      assert(held.unsaved, "the token is held in memory");
      assertMatch(held.unsaved, /ENOSPC/);
      assertEquals(held.source, "generated");
      assert(held.token.length >= 32);
      assertEquals(await listFiles(stateDir), [], "nothing half-written");
      await filler.free();
      filler = undefined;
      // A reload saves the same token (gwcli then finds it in the file).
      const saved = await resolveManagementToken({ env, stateDir, unsaved: held.token });
      assertEquals([saved.token, saved.unsaved], [held.token, undefined]);
      assertEquals((await Deno.readTextFile(`${stateDir}/management-token`)).trim(), held.token);
    } finally {
      await filler?.free();
      await small.unmount();
    }
  },
});
