/**
 * Streaming, not buffering: a 100 MiB request body goes through a gateway `http` pipeline
 * (max_body_size raised to 200 MiB) to an upstream that counts and hashes what arrives, while the
 * gateway process's resident memory is sampled. The gateway may grow by less than 50 MiB.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { freePort, peakRssOf, resetPeakRss, rssOf, startGateway } from "./support/mod.ts";

const MIB = 1024 * 1024;
const BODY_BYTES = 100 * MIB;
const CHUNK_BYTES = 64 * 1024;
const MAX_GROWTH = 50 * MIB;

/** Gateway config: `/api` -> `http` backend at `upstreamUrl`, bodies up to 200 MiB. */
function config(dataPort: number, mgmtPort: number, upstreamUrl: string): string {
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

[pipelines.p]
endpoints = ["api"]
backends = ["up"]
`;
}

/** A stream of `total` random bytes in 64 KiB chunks; `sha256()` is their digest once read. */
function randomBody(total: number): { stream: ReadableStream<Uint8Array>; sha256(): string } {
  const hash = createHash("sha256");
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) {
        controller.close();
        return;
      }
      const chunk = crypto.getRandomValues(new Uint8Array(Math.min(CHUNK_BYTES, total - sent)));
      hash.update(chunk);
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, sha256: () => hash.digest("hex") };
}

Deno.test("memory: a 100 MiB body streams through an http pipeline with < 50 MiB RSS growth", async () => {
  await using upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const hash = createHash("sha256");
      let bytes = 0;
      for await (const chunk of request.body ?? ReadableStream.from([])) {
        hash.update(chunk);
        bytes += chunk.byteLength;
      }
      return Response.json({ bytes, sha256: hash.digest("hex") });
    },
  );
  const dataPort = freePort();
  await using gateway = await startGateway({
    configText: config(dataPort, freePort(), `http://127.0.0.1:${upstream.addr.port}`),
  });
  const url = `${gateway.dataUrl(dataPort)}/api/upload`;

  // Warm up the path (code, connection pool) with a small streamed body, then take the baseline.
  const warm = randomBody(MIB);
  const warmResponse = await fetch(url, { method: "POST", body: warm.stream });
  assert.equal(warmResponse.status, 200, gateway.output());
  assert.deepEqual(await warmResponse.json(), { bytes: MIB, sha256: warm.sha256() });

  const baseline = rssOf(gateway.pid);
  const peakReset = resetPeakRss(gateway.pid);
  let sampledPeak = baseline;
  let samples = 0;
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, rssOf(gateway.pid));
    samples++;
  }, 20);
  const started = performance.now();
  const body = randomBody(BODY_BYTES);
  let result: { bytes: number; sha256: string };
  try {
    const response = await fetch(url, {
      method: "POST",
      body: body.stream,
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
    `gateway RSS: baseline ${(baseline / MIB).toFixed(1)} MiB, peak ${
      (peak / MIB).toFixed(1)
    } MiB, ` +
      `growth ${(growth / MIB).toFixed(1)} MiB (limit 50; ${samples} samples` +
      `${peakReset ? " + VmHWM" : ""}); 100 MiB in ${seconds.toFixed(2)} s ` +
      `(${(100 / seconds).toFixed(0)} MiB/s)`,
  );

  assert.equal(result.bytes, BODY_BYTES);
  assert.equal(result.sha256, body.sha256());
  assert.ok(
    growth < MAX_GROWTH,
    `gateway RSS grew by ${(growth / MIB).toFixed(1)} MiB while streaming 100 MiB`,
  );
});
