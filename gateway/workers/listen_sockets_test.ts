/**
 * The listening-socket census (Linux): a listen notes exactly its own socket among others on the
 * same port, and shutting that socket down sends every new connection to the others.
 */
import { assert, assertEquals } from "../../tests/assert.ts";
import { listeningInodes, noteListen, shutDownSockets, stillListening } from "./listen_sockets.ts";

const LINUX = Deno.build.os === "linux";

/** A listener that answers each connection with one byte, `tag`. */
function tagged(port: number, tag: string): Deno.TcpListener {
  const listener = Deno.listen({ hostname: "127.0.0.1", port, reusePort: true });
  (async () => {
    for await (const conn of listener) {
      conn.write(new TextEncoder().encode(tag)).finally(() => conn.close()).catch(() => {});
    }
  })().catch(() => {});
  return listener;
}

/** The tag of the listener a new connection reached. */
async function reached(port: number): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const buf = new Uint8Array(1);
    return await conn.read(buf) === 1 ? new TextDecoder().decode(buf) : "";
  } finally {
    conn.close();
  }
}

Deno.test({
  name: "listen sockets: each listen notes its own socket; a shut one gets no connection",
  ignore: !LINUX,
  fn: async () => {
    const lock = new Int32Array(new SharedArrayBuffer(4));
    const first = noteListen(lock, () => tagged(0, "a"), (l) => (l.addr as Deno.NetAddr).port);
    const port = (first.value.addr as Deno.NetAddr).port;
    const second = noteListen(lock, () => tagged(port, "b"), () => port);
    try {
      assertEquals([first.inodes.length, second.inodes.length], [1, 1]);
      assert(first.inodes[0] !== second.inodes[0]);
      assertEquals([...listeningInodes(port)!].sort(), [...first.inodes, ...second.inodes].sort());
      assertEquals(Atomics.load(lock, 0), 0);

      assertEquals(shutDownSockets(second.inodes), { closed: 1 });
      assertEquals(stillListening(second.inodes), []);
      const tags = new Set<string>();
      for (let i = 0; i < 30; i++) tags.add(await reached(port));
      assertEquals([...tags], ["a"]);
    } finally {
      first.value.close();
      second.value.close();
    }
  },
});

Deno.test("listen sockets: unknown sockets cannot be shut down, and say why", () => {
  assertEquals(shutDownSockets([]), { closed: 0, error: "its listening sockets are not known" });
});

Deno.test({
  name: "listen sockets: found and shut down under the permissions `deno task start` grants",
  ignore: !LINUX,
  fn: async () => {
    // Deno refuses its own file APIs on /proc/self without --allow-all: the census must work
    // with exactly the flags the gateway ships with (deno.json's start task).
    const tasks = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)))
      .tasks as Record<string, string>;
    const flags = tasks.start.split(/\s+/).filter((w) =>
      w.startsWith("--allow") || w.startsWith("--unstable")
    );
    assert(!flags.includes("--allow-all") && !flags.includes("-A"), flags.join(" "));
    const script = await Deno.makeTempFile({ suffix: ".ts" });
    const module = new URL("./listen_sockets.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { noteListen, shutDownSockets } from ${JSON.stringify(module)};
const l = noteListen(new Int32Array(new SharedArrayBuffer(4)),
  () => Deno.listen({ hostname: "127.0.0.1", port: 0, reusePort: true }), (x) => x.addr.port);
console.log(JSON.stringify({ noted: l.inodes.length, shut: shutDownSockets(l.inodes) }));`,
    );
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-check", ...flags, script],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout);
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      assertEquals(JSON.parse(text), { noted: 1, shut: { closed: 1 } });
    } finally {
      await Deno.remove(script);
    }
  },
});
