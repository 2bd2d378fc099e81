/**
 * Atomicity of local storage writes against a crash: a gateway process killed with SIGKILL while
 * it streams a body to disk leaves no visible object (a new object stays absent, a replaced one
 * keeps its old content and content type); a gateway started afterwards on the same root sees
 * nothing of the interrupted write, removes its temporary files, and can store the object normally.
 */
import { assertEquals } from "./assert.ts";
import { listFiles, partialUpload, rawRequest, storageConfig, until } from "./storage_support.ts";
import { freePort, startGateway } from "./support/mod.ts";

const MIB = 1024 * 1024;

function childConfig(dataPort: number, mgmtPort: number, root: string): string {
  return `[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}

[logging]
level = "warn"

[proxy.content_limits]
max_body_size = ${256 * MIB}
` + storageConfig(`root = "${root}"\nread_pattern = "{path}"\nwrite_pattern = "{path}"`);
}

Deno.test("storage crash: SIGKILL mid-write leaves no partial object; old versions survive", async () => {
  const root = await Deno.makeTempDir({ prefix: "gw-storage-crash-" });
  try {
    const dataPort = freePort();
    const child = await startGateway({ configText: childConfig(dataPort, freePort(), root) });
    try {
      // An existing object that a PUT will try to replace.
      const v1 = await fetch(`http://127.0.0.1:${dataPort}/files/crash/old.txt`, {
        method: "PUT",
        headers: { "content-type": "text/plain" },
        body: "version 1",
      });
      assertEquals(v1.status, 201, child.output());
      await v1.body?.cancel();

      const fresh = await partialUpload(
        dataPort,
        "/files/crash/new.bin",
        64 * MIB,
        8 * MIB,
        "POST",
      );
      const replace = await partialUpload(dataPort, "/files/crash/old.txt", 64 * MIB, 8 * MIB);
      // Both bodies are being written to temporary files when the process dies.
      await until(async () => {
        const files = await listFiles(root);
        const temps = files.filter((f) => f.endsWith(".tmp"));
        if (temps.length < 2) return false;
        const sizes = await Promise.all(
          temps.map(async (t) => (await Deno.stat(`${root}/${t}`)).size),
        );
        return sizes.every((s) => s > 0);
      }, "two temporary files with data");
      child.process.kill("SIGKILL");
      await child.process.status;
      fresh.close();
      replace.close();
    } finally {
      await child.stop();
    }

    const left = await listFiles(root);
    const visible = left.filter((f) => !f.split("/").some((s) => s.startsWith(".")));
    assertEquals(visible, ["crash/old.txt"], `files after the kill: ${left.join(", ")}`);
    assertEquals(left.filter((f) => f.endsWith(".tmp")).length, 2, left.join(", "));

    // A new gateway process on the same root: the interrupted writes are invisible, and their
    // temporary files are removed at start.
    const port = freePort();
    const next = await startGateway({ configText: childConfig(port, freePort(), root) });
    const gw = { url: `http://127.0.0.1:${port}`, dataPort: port, stop: () => next.stop() };
    try {
      const missing = await fetch(`${gw.url}/files/crash/new.bin`);
      assertEquals(missing.status, 404);
      await missing.body?.cancel();
      const old = await fetch(`${gw.url}/files/crash/old.txt`);
      assertEquals(old.status, 200);
      assertEquals(old.headers.get("content-type"), "text/plain");
      assertEquals(await old.text(), "version 1");
      // Temporary files cannot be addressed.
      const temp = left.find((f) => f.endsWith(".tmp"))!;
      const direct = await rawRequest(gw.dataPort, "GET", `/files/${temp}`);
      assertEquals(direct.status, 400);
      await until(
        async () => (await listFiles(root)).every((f) => !f.endsWith(".tmp")),
        "the stale temporary files to be removed",
      );
      assertEquals(await listFiles(root), ["crash/.old.txt.meta.json", "crash/old.txt"]);
      // The name is free: POST stores it (no stale 409).
      const again = await fetch(`${gw.url}/files/crash/new.bin`, {
        method: "POST",
        body: new Uint8Array(1000),
      });
      assertEquals(again.status, 201);
      await again.body?.cancel();
    } finally {
      await gw.stop();
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
