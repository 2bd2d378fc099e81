/**
 * Flat memory on S3: a 200 MiB body goes through a gateway process to s3rver as a multipart
 * upload and comes back streamed, while the gateway's resident memory is sampled; each direction
 * may grow it by less than 50 MiB (parts in flight are bounded to three 8 MiB buffers).
 */
import { createHash } from "node:crypto";
import { assert, assertEquals } from "./assert.ts";
import { requireS3rver, startS3rver, storageConfig } from "./storage_support.ts";
import { freePort, peakRssOf, resetPeakRss, rssOf, startGateway } from "./support/mod.ts";

const RUN = requireS3rver();
const MIB = 1024 * 1024;
const BODY_BYTES = 200 * MIB;
const MAX_GROWTH = 50 * MIB;

function config(dataPort: number, mgmtPort: number, endpoint: string): string {
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
    `root = "s3://mem/objects"\nregion = "us-east-1"\nendpoint = "${endpoint}"\n` +
      `access_key_id = "S3RVER"\nsecret_access_key = "S3RVER"\n` +
      `read_pattern = "{path}"\nwrite_pattern = "{path}"`,
    "timeout_secs = 300",
  );
}

/** Peak RSS growth of `pid` over its value now, while `fn` runs. */
async function growthDuring(pid: number, fn: () => Promise<void>): Promise<number> {
  const baseline = rssOf(pid);
  const hwm = resetPeakRss(pid);
  let peak = baseline;
  const timer = setInterval(() => peak = Math.max(peak, rssOf(pid)), 20);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssOf(pid), hwm ? peakRssOf(pid) : 0) - baseline;
}

Deno.test({
  name: "storage s3 memory: 200 MiB up (multipart) and down with < 50 MiB RSS growth",
  ignore: !RUN,
  fn: async () => {
    const s3 = await startS3rver("mem");
    try {
      const dataPort = freePort();
      await using gateway = await startGateway({
        configText: config(dataPort, freePort(), s3.endpoint),
      });
      const url = `${gateway.dataUrl(dataPort)}/files/big.bin`;
      const warm = await fetch(`${gateway.dataUrl(dataPort)}/files/warm.bin`, {
        method: "PUT",
        body: new Uint8Array(12 * MIB),
      });
      assertEquals(warm.status, 201, gateway.output());
      await warm.body?.cancel();
      await (await fetch(`${gateway.dataUrl(dataPort)}/files/warm.bin`)).arrayBuffer();

      const hash = createHash("sha256");
      const parts: Uint8Array[] = [];
      for (let done = 0; done < BODY_BYTES; done += 65_536) {
        const chunk = crypto.getRandomValues(new Uint8Array(65_536));
        hash.update(chunk);
        parts.push(chunk);
      }
      const sha256 = hash.digest("hex");
      const blob = new Blob(parts as BlobPart[]);

      let started = performance.now();
      let stored: { size: number; sha256: string } | undefined;
      const up = await growthDuring(gateway.pid, async () => {
        const res = await fetch(url, { method: "PUT", body: blob });
        assertEquals(res.status, 201, `${await res.clone().text()}\n${gateway.output()}`);
        stored = await res.json();
      });
      console.log(
        `s3 upload: growth ${(up / MIB).toFixed(1)} MiB (limit 50); 200 MiB in ${
          ((performance.now() - started) / 1000).toFixed(2)
        } s`,
      );
      assertEquals(stored?.sha256, sha256);

      started = performance.now();
      const back = createHash("sha256");
      let bytes = 0;
      const down = await growthDuring(gateway.pid, async () => {
        const res = await fetch(url);
        assertEquals(res.status, 200);
        for await (const chunk of res.body!) {
          back.update(chunk);
          bytes += chunk.byteLength;
        }
      });
      console.log(
        `s3 download: growth ${(down / MIB).toFixed(1)} MiB (limit 50); 200 MiB in ${
          ((performance.now() - started) / 1000).toFixed(2)
        } s`,
      );
      assertEquals(bytes, BODY_BYTES);
      assertEquals(back.digest("hex"), sha256);
      assert(up < MAX_GROWTH, `upload grew the gateway by ${(up / MIB).toFixed(1)} MiB`);
      assert(down < MAX_GROWTH, `download grew the gateway by ${(down / MIB).toFixed(1)} MiB`);
    } finally {
      await s3.stop();
    }
  },
});
