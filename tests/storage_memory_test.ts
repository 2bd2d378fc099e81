/**
 * Flat memory: a 200 MiB body is stored on a local root and read back through a gateway process
 * while its resident memory is sampled. Neither direction may grow the gateway by 50 MiB or more:
 * the body streams to and from disk, it is never held whole.
 */
import { createHash } from "node:crypto";
import { assert, assertEquals } from "./assert.ts";
import { storageConfig } from "./storage_support.ts";
import { freePort, peakRssOf, resetPeakRss, rssOf, startGateway } from "./support/mod.ts";

const MIB = 1024 * 1024;
const BODY_BYTES = 200 * MIB;
const CHUNK_BYTES = 64 * 1024;
const MAX_GROWTH = 50 * MIB;

function config(dataPort: number, mgmtPort: number, root: string): string {
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
` + storageConfig(
    `root = "${root}"\nread_pattern = "{path}"\nwrite_pattern = "{path}"`,
    "timeout_secs = 120",
  );
}

/** `total` random bytes as a Blob (declared Content-Length, as curl sends files) and their sha256. */
function randomBody(total: number): { blob: Blob; sha256: string } {
  const hash = createHash("sha256");
  const parts: Uint8Array[] = [];
  for (let sent = 0; sent < total; sent += CHUNK_BYTES) {
    const chunk = crypto.getRandomValues(new Uint8Array(Math.min(CHUNK_BYTES, total - sent)));
    hash.update(chunk);
    parts.push(chunk);
  }
  return { blob: new Blob(parts as BlobPart[]), sha256: hash.digest("hex") };
}

/** Samples a process's RSS every 20 ms (and its VmHWM where the kernel lets us reset it). */
class RssMeter {
  readonly baseline: number;
  readonly #pid: number;
  readonly #hwm: boolean;
  #peak: number;
  #timer: ReturnType<typeof setInterval>;

  constructor(pid: number) {
    this.#pid = pid;
    this.baseline = rssOf(pid);
    this.#hwm = resetPeakRss(pid);
    this.#peak = this.baseline;
    this.#timer = setInterval(() => this.#peak = Math.max(this.#peak, rssOf(pid)), 20);
  }

  /** Stop sampling; the peak growth over the baseline in bytes. */
  stop(): number {
    clearInterval(this.#timer);
    const peak = Math.max(this.#peak, rssOf(this.#pid), this.#hwm ? peakRssOf(this.#pid) : 0);
    return peak - this.baseline;
  }

  /** One line for the log. */
  report(what: string, growth: number, seconds: number): string {
    return `${what}: baseline ${(this.baseline / MIB).toFixed(1)} MiB, growth ${
      (growth / MIB).toFixed(1)
    } MiB (limit 50${this.#hwm ? ", VmHWM" : ""}); 200 MiB in ${seconds.toFixed(2)} s (${
      (200 / seconds).toFixed(0)
    } MiB/s)`;
  }
}

Deno.test("storage memory: 200 MiB up and down through a local root with < 50 MiB RSS growth", async () => {
  const root = await Deno.makeTempDir({ prefix: "gw-storage-mem-" });
  try {
    const dataPort = freePort();
    await using gateway = await startGateway({ configText: config(dataPort, freePort(), root) });
    const base = `${gateway.dataUrl(dataPort)}/files`;

    // Warm up both paths with 1 MiB, then measure.
    const warm = randomBody(MIB);
    const warmPut = await fetch(`${base}/warm.bin`, { method: "PUT", body: warm.blob });
    assertEquals(warmPut.status, 201, gateway.output());
    await warmPut.body?.cancel();
    await (await fetch(`${base}/warm.bin`)).arrayBuffer();

    const body = randomBody(BODY_BYTES);
    let meter = new RssMeter(gateway.pid);
    let started = performance.now();
    let stored: { size: number; sha256: string };
    let upGrowth: number;
    try {
      const res = await fetch(`${base}/big/scan.bin`, {
        method: "PUT",
        body: body.blob,
        headers: { "content-type": "application/octet-stream" },
      });
      assertEquals(res.status, 201, `${await res.clone().text()}\n${gateway.output()}`);
      stored = await res.json();
    } finally {
      upGrowth = meter.stop();
    }
    console.log(meter.report("upload", upGrowth, (performance.now() - started) / 1000));
    assertEquals(stored.size, BODY_BYTES);
    assertEquals(stored.sha256, body.sha256);
    assertEquals((await Deno.stat(`${root}/big/scan.bin`)).size, BODY_BYTES);

    meter = new RssMeter(gateway.pid);
    started = performance.now();
    const hash = createHash("sha256");
    let bytes = 0;
    let downGrowth: number;
    try {
      const res = await fetch(`${base}/big/scan.bin`);
      assertEquals(res.status, 200);
      for await (const chunk of res.body!) {
        hash.update(chunk);
        bytes += chunk.byteLength;
      }
    } finally {
      downGrowth = meter.stop();
    }
    console.log(meter.report("download", downGrowth, (performance.now() - started) / 1000));
    assertEquals(bytes, BODY_BYTES);
    assertEquals(hash.digest("hex"), body.sha256);

    assert(upGrowth < MAX_GROWTH, `upload grew the gateway by ${(upGrowth / MIB).toFixed(1)} MiB`);
    assert(
      downGrowth < MAX_GROWTH,
      `download grew the gateway by ${(downGrowth / MIB).toFixed(1)} MiB`,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
