/**
 * Streaming, not buffering: a 100 MiB request body goes through a gateway `http` pipeline
 * (max_body_size raised to 200 MiB) to an upstream that counts and hashes what arrives, while the
 * gateway process's resident memory is sampled. The gateway may grow by less than 50 MiB. The
 * same holds for a pipeline with a tee destination, whose body is spooled to a temporary file
 * (spool_threshold) and streamed to both upstreams from it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  freePort,
  peakRssOf,
  removeDir,
  resetPeakRss,
  rssOf,
  startGateway,
  tempDir,
  waitFor,
} from "./support/mod.ts";

const MIB = 1024 * 1024;
const BODY_BYTES = 100 * MIB;
const CHUNK_BYTES = 64 * 1024;
const MAX_GROWTH = 50 * MIB;

/**
 * Gateway config: `/api` -> `http` backend at `upstreamUrl` (and a tee to each of `teeUrls`),
 * bodies up to 200 MiB.
 */
function config(
  dataPort: number,
  mgmtPort: number,
  upstreamUrl: string,
  teeUrls: string[] = [],
): string {
  const tees = teeUrls.map((url, i) => `
[backends.tee${i}]
service = "http"
required = true
[backends.tee${i}.options]
base_url = "${url}"
`).join("");
  const names = ["up", ...teeUrls.map((_, i) => `tee${i}`)].map((n) => `"${n}"`).join(", ");
  return `[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}
prefix = "admin"

[logging]
level = "warn"

[proxy.content_limits]
max_body_size = ${200 * MIB}

[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstreamUrl}"
${tees}
[pipelines.p]
endpoints = ["api"]
backends = [${names}]
`;
}

/**
 * `total` random bytes as a Blob (so the upload declares its Content-Length, as curl, browsers and
 * HTTP libraries do for files) and their sha256. The Blob lives in the test process, not the
 * gateway.
 */
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

/** An upstream that answers the byte count and sha256 of what it received (and records it). */
function hashingUpstream(received: { bytes: number; sha256: string }[] = []) {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const hash = createHash("sha256");
      let bytes = 0;
      for await (const chunk of request.body ?? ReadableStream.from([])) {
        hash.update(chunk);
        bytes += chunk.byteLength;
      }
      const result = { bytes, sha256: hash.digest("hex") };
      received.push(result);
      return Response.json(result);
    },
  );
}

/** Uploads 100 MiB through `pipeline` and checks the gateway's RSS growth. */
async function uploadMeasured(label: string, withTee: boolean): Promise<void> {
  await using upstream = hashingUpstream();
  const teeReceived: { bytes: number; sha256: string }[] = [];
  await using tee = hashingUpstream(teeReceived);
  const dataPort = freePort();
  const teeUrls = withTee ? [`http://127.0.0.1:${tee.addr.port}`] : [];
  // The gateway's TMPDIR, where a tee's body is spooled.
  const spoolDir = await tempDir("gw-spool-");
  await using gateway = await startGateway({
    configText: config(dataPort, freePort(), `http://127.0.0.1:${upstream.addr.port}`, teeUrls),
    env: { TMPDIR: spoolDir },
  });
  const url = `${gateway.dataUrl(dataPort)}/api/upload`;

  // Warm up the path (code, connection pool) with a small streamed body, then take the baseline.
  const warm = randomBody(MIB);
  const warmResponse = await fetch(url, { method: "POST", body: warm.blob });
  assert.equal(warmResponse.status, 200, gateway.output());
  assert.deepEqual(await warmResponse.json(), { bytes: MIB, sha256: warm.sha256 });

  const baseline = rssOf(gateway.pid);
  const peakReset = resetPeakRss(gateway.pid);
  let sampledPeak = baseline;
  let samples = 0;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, rssOf(gateway.pid));
    samples++;
  }, 20);
  const body = randomBody(BODY_BYTES);
  const started = performance.now();
  let result: { bytes: number; sha256: string };
  try {
    const response = await fetch(url, {
      method: "POST",
      body: body.blob,
      headers: { "content-type": "application/octet-stream" },
    });
    assert.equal(response.status, 200, `${await response.clone().text()}\n${gateway.output()}`);
    result = await response.json();
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const peak = Math.max(sampledPeak, rssOf(gateway.pid), peakReset ? peakRssOf(gateway.pid) : 0);
  const growth = peak - baseline;
  console.log(
    `${label}: gateway RSS: baseline ${(baseline / MIB).toFixed(1)} MiB, peak ${
      (peak / MIB).toFixed(1)
    } MiB, ` +
      `growth ${(growth / MIB).toFixed(1)} MiB (limit 50; ${samples} samples` +
      `${peakReset ? " + VmHWM" : ""}); 100 MiB in ${seconds.toFixed(2)} s ` +
      `(${(100 / seconds).toFixed(0)} MiB/s)`,
  );

  assert.equal(result.bytes, BODY_BYTES);
  assert.equal(result.sha256, body.sha256);
  if (withTee) {
    assert.deepEqual(teeReceived.at(-1), { bytes: BODY_BYTES, sha256: body.sha256 });
    // Once both backends have it, the spool file is gone.
    await waitFor(async () => (await Array.fromAsync(Deno.readDir(spoolDir))).length === 0, {
      timeoutMs: 5_000,
      description: `no spool file left in ${spoolDir}`,
    });
  }
  await removeDir(spoolDir);
  assert.ok(
    growth < MAX_GROWTH,
    `gateway RSS grew by ${(growth / MIB).toFixed(1)} MiB while streaming 100 MiB`,
  );
}

Deno.test("memory: a 100 MiB body streams through an http pipeline with < 50 MiB RSS growth", async () => {
  await uploadMeasured("streamed", false);
});

Deno.test("memory: a 100 MiB body to a primary and a tee is spooled, < 50 MiB RSS growth", async () => {
  await uploadMeasured("tee", true);
});
