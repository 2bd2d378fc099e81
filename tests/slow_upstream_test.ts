/**
 * Slow and oversized upstream answers: the backend's `timeout_secs` bounds the whole exchange,
 * body included (an upstream that trickles its body held the client for 60 s with
 * `timeout_secs = 3`), and `max_body_size` applies to answers as to requests (a 50 MB answer
 * passed a 10 MB limit).
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";

const MIB = 1024 * 1024;

function config(baseUrl: string, extra = ""): string {
  return `
[proxy.content_limits]
max_body_size = ${MIB}

[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[backends.up]
service = "http"
timeout_secs = 1
retries = 0
[backends.up.options]
base_url = "${baseUrl}"

[pipelines.api]
endpoints = ["api"]
backends = ["up"]
${extra}`;
}

/**
 * A body that sends one byte every 200 ms, `bytes` in all (until cancelled): the upstream's
 * trickle, its behaviour under test.
 */
function trickle(bytes: number): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setInterval> | undefined;
  let sent = 0;
  return new ReadableStream({
    start(controller) {
      timer = setInterval(() => {
        try {
          controller.enqueue(new Uint8Array([0x61]));
          if (++sent === bytes) {
            clearInterval(timer);
            controller.close();
          }
        } catch {
          clearInterval(timer);
        }
      }, 200);
    },
    cancel() {
      clearInterval(timer);
    },
  });
}

Deno.test("slow upstream: timeout_secs bounds the body too; the client is released, not held", async () => {
  // 50 bytes over 10 s: a body the 1 s timeout does not bound comes whole.
  const up = startUpstream(() =>
    new Response(trickle(50), { headers: { "content-type": "text/plain" } })
  );
  const gw = await startTestGateway(config(up.url));
  try {
    const res = await fetch(`${gw.url}/api/slow`);
    assertEquals(res.status, 200, "headers came in time");
    let failed = false;
    try {
      await res.arrayBuffer();
    } catch {
      failed = true;
    }
    // The client is released when the gateway cuts the body (the event), long before the
    // upstream would have ended it.
    assert(failed, "the trickling body is cut (timeout_secs = 1), not passed on to its end");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("upstream answers over max_body_size: 502 upstream_response_too_large, or cut when the length is unknown", async () => {
  const big = new Uint8Array(2 * MIB).fill(0x62);
  const up = startUpstream((req) => {
    if (new URL(req.url).pathname.endsWith("/declared")) {
      return new Response(big, { headers: { "content-type": "application/octet-stream" } });
    }
    // Chunked: no Content-Length, so the gateway learns the size only while forwarding.
    return new Response(
      new ReadableStream({
        start(controller) {
          for (let i = 0; i < 32; i++) controller.enqueue(big.subarray(i * 65536, (i + 1) * 65536));
          controller.close();
        },
      }),
      { headers: { "content-type": "application/octet-stream" } },
    );
  });
  const gw = await startTestGateway(config(up.url));
  try {
    const declared = await fetch(`${gw.url}/api/declared`);
    assertEquals(declared.status, 502);
    const body = await declared.json();
    assertEquals(body.error.code, "upstream_response_too_large");
    assertMatch(body.error.message, /answered 2097152 bytes, over its limit of 1048576 bytes/);

    const chunked = await fetch(`${gw.url}/api/chunked`);
    let received = 0;
    let cut = false;
    try {
      for await (const chunk of chunked.body!) received += chunk.byteLength;
    } catch {
      cut = true;
    }
    assert(cut, "the stream is cut where it passes the limit");
    assert(received <= MIB, `received ${received} bytes, limit ${MIB}`);
  } finally {
    await gw.stop();
  }
  // A backend that serves large answers by design raises its own limit.
  const raised = await startTestGateway(
    config(up.url).replace("retries = 0", "retries = 0\nmax_response_size = 4194304"),
  );
  try {
    const res = await fetch(`${raised.url}/api/declared`);
    assertEquals(res.status, 200);
    assertEquals((await res.arrayBuffer()).byteLength, 2 * MIB);
  } finally {
    await raised.stop();
    await up.stop();
  }
});
