/** Spooling of bodies read for several backends: memory below the threshold, a file above it. */
import { assert, assertEquals, assertRejects } from "../tests/assert.ts";
import { Body, tooLarge } from "./envelope.ts";
import { GatewayError } from "./errors.ts";
import { readOrSpool, sweepStaleSpools } from "./spool.ts";
import { DEFAULT_CONTENT_LIMITS } from "../shared/gateway_config/types.ts";

/** `total` bytes counting 0..255, as a stream of `chunk`-byte pieces. */
function counting(total: number, chunk = 1000): { bytes: Uint8Array; stream: ReadableStream } {
  const bytes = new Uint8Array(total).map((_, i) => i & 0xff);
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < total; i += chunk) pieces.push(bytes.slice(i, i + chunk));
  return { bytes, stream: ReadableStream.from(pieces) };
}

/**
 * Runs `fn` with a fresh directory, which it returns the listing of. The directory is passed to
 * the code under test, never set as TMPDIR: test files run in parallel in one process, so a
 * changed TMPDIR would send other files' temporary files here (and take this one's elsewhere).
 */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "spool-test-" });
  try {
    await fn(dir);
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const OPTIONS = { threshold: 4096, limit: 1 << 20, overLimit: tooLarge };

Deno.test("readOrSpool: within the threshold in memory, past it a 0600 file with the bytes", async () => {
  const small = counting(4096);
  const kept = await readOrSpool(small.stream, OPTIONS);
  assert("bytes" in kept);
  assertEquals(kept.bytes, small.bytes);

  const left = await inTempDir(async (dir) => {
    const large = counting(10_000);
    const spooled = await readOrSpool(large.stream, { ...OPTIONS, dir });
    assert("file" in spooled);
    assertEquals(spooled.file.size, 10_000);
    assert(spooled.file.path.startsWith(dir), spooled.file.path);
    assertEquals((await Deno.stat(spooled.file.path)).mode! & 0o777, 0o600);
    assertEquals(await Deno.readFile(spooled.file.path), large.bytes);
    await Deno.remove(spooled.file.path);
  });
  assertEquals(left, []);
});

Deno.test("readOrSpool: over the limit is 413 and leaves no file behind", async () => {
  const left = await inTempDir(async (dir) => {
    const err = await assertRejects(
      () => readOrSpool(counting(50_000).stream, { ...OPTIONS, limit: 20_000, dir }),
      /max_body_size of 20000 bytes/,
    );
    assert(err instanceof GatewayError);
    assertEquals(err.status, 413);
  });
  assertEquals(left, []);
});

Deno.test("Body.makeReplayable: a spooled body is sent again and again, with its length", async () => {
  {
    const limits = { ...DEFAULT_CONTENT_LIMITS, spool_threshold: 1024 };
    const { bytes, stream } = counting(5000);
    const body = new Body(stream, "application/octet-stream", limits);
    const path = await body.makeReplayable();
    assert(path !== null);
    assert(body.replayable);
    assertEquals(body.knownLength, 5000);
    assertEquals(body.isEmpty, false);
    for (let i = 0; i < 2; i++) {
      const sent = body.forwardable();
      assert(sent instanceof ReadableStream);
      assertEquals(new Uint8Array(await new Response(sent).arrayBuffer()), bytes);
    }
    assertEquals(await body.bytes(), bytes);
    await Deno.remove(path);

    const small = new Body(counting(100).stream, "application/octet-stream", limits);
    assertEquals(await small.makeReplayable(), null);
    assertEquals(small.replayable, false);
    assertEquals(small.forwardable(), counting(100).bytes);
  }
});

Deno.test("sweepStaleSpools: files of a process that is gone are removed; ours and others' stay", async () => {
  const dir = await Deno.makeTempDir({ prefix: "spool-sweep-" });
  try {
    // A pid that cannot be running (above the kernel's pid_max), ours, and a non-spool file.
    const gone = `${dir}/gateway-spool-99999999-abc`;
    const mine = `${dir}/gateway-spool-${Deno.pid}-abc`;
    const other = `${dir}/unrelated-file`;
    for (const f of [gone, mine, other]) await Deno.writeTextFile(f, "PHI");
    assertEquals(await sweepStaleSpools(dir), 1);
    const left = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
    assertEquals(left, [`gateway-spool-${Deno.pid}-abc`, "unrelated-file"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readOrSpool: spool files are named after this process (for the sweep)", async () => {
  await inTempDir(async (dir) => {
    const spooled = await readOrSpool(counting(10_000).stream, { ...OPTIONS, dir });
    assert("file" in spooled);
    assert(spooled.file.path.includes(`gateway-spool-${Deno.pid}-`), spooled.file.path);
    await Deno.remove(spooled.file.path);
  });
});
