/**
 * An upstream whose answer breaks off mid-body is its own outcome, 502 `upstream_body_failed`,
 * not an `internal_error` of the gateway: read by a middleware it is the answer (logged, counted
 * and audited with the code); streamed to the client after its head, the client's connection is
 * cut and the log line and the counter name the code with the request id. A backend that drops
 * the connection while the request body is sent is `backend_unavailable` ("refused or dropped").
 */
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import { parseExposition, sampleValue } from "./support/metrics.ts";
import { waitFor } from "./support/mod.ts";

/** An upstream that declares a 100,000-byte JSON answer, sends 20,001 bytes, and closes. */
function cuttingUpstream(): { port: number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const encoder = new TextEncoder();
  void (async () => {
    for await (const conn of listener) {
      void (async () => {
        const buf = new Uint8Array(64 * 1024);
        let head = "";
        try {
          while (!head.includes("\r\n\r\n")) {
            const n = await conn.read(buf);
            if (n === null) break;
            head += new TextDecoder().decode(buf.subarray(0, n));
          }
          if (head.startsWith("POST")) {
            // Drops the connection while the request body is still coming.
            conn.close();
            return;
          }
          await conn.write(encoder.encode(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[" +
              "1,".repeat(10_000),
          ));
          conn.close();
        } catch {
          try {
            conn.close();
          } catch { /* closed */ }
        }
      })();
    }
  })();
  return { port: (listener.addr as Deno.NetAddr).port, close: () => listener.close() };
}

Deno.test("an upstream answer cut mid-body is 502 upstream_body_failed: logged, counted, audited", async () => {
  const upstream = cuttingUpstream();
  const gw = await startTestGateway(
    `
transforms_path = "{DIR}/transforms"
[endpoints.plain]
service = "http"
[endpoints.plain.options]
path_prefix = "/plain"
[endpoints.sorted]
service = "http"
[endpoints.sorted.options]
path_prefix = "/sorted"
[backends.up]
service = "http"
retries = 0
[backends.up.options]
base_url = "http://127.0.0.1:${upstream.port}"
[middleware.sort]
type = "transform"
[middleware.sort.options]
spec_path = "sort.json"
apply = "right"
[pipelines.plain]
endpoints = ["plain"]
backends = ["up"]
[pipelines.sorted]
endpoints = ["sorted"]
middleware = ["sort"]
backends = ["up"]
[audit]
file = "audit/audit.jsonl"
`,
    { workers: 1, files: { "transforms/sort.json": JSON.stringify([{ operation: "sort" }]) } },
  );
  try {
    // Read by a transform: the error is the answer.
    const sorted = await fetch(`${gw.url}/sorted/x`);
    assertEquals(sorted.status, 502);
    const error = (await sorted.json()).error;
    assertEquals(error.code, "upstream_body_failed");
    assertEquals(error.message, "backend up's answer broke off after 20001 bytes");

    // Streamed: the head went out, so the client sees its connection end mid-body.
    const plain = await fetch(`${gw.url}/plain/x`, { headers: { "x-request-id": "cut-1" } });
    assertEquals(plain.status, 200);
    const read = await plain.text().then(() => "whole", () => "cut");
    assertEquals(read, "cut");

    // A backend that drops the connection while the request body is sent.
    const dropped = await fetch(`${gw.url}/plain/upload`, {
      method: "POST",
      body: new Uint8Array(4_000_000),
    });
    assertEquals(dropped.status, 502);
    assertEquals((await dropped.json()).error.code, "backend_unavailable");

    const lines = () => gw.logs.map((l) => JSON.parse(l));
    await waitFor(() => Promise.resolve(lines().some((l) => l.request_id === "cut-1" && l.code)), {
      timeoutMs: 10_000,
      description: "the log line of the streamed answer that broke off",
    });
    const broke = lines().find((l) => l.request_id === "cut-1" && l.code)!;
    assertEquals([broke.level, broke.code, broke.backend], ["error", "upstream_body_failed", "up"]);
    assertEquals(broke.msg, "the answer broke off after its head was sent");
    assertEquals(lines().filter((l) => l.msg === "unhandled error in the HTTP listener"), []);

    const metrics = parseExposition(await (await gw.mgmtFetch("/metrics")).text());
    assertEquals(sampleValue(metrics, "gateway_errors_total", { code: "upstream_body_failed" }), 2);
    assertEquals(
      sampleValue(metrics, "gateway_errors_total", { code: "internal_error" }),
      undefined,
    );

    const records = (await Deno.readTextFile(`${gw.dir}/audit/audit.jsonl`)).split("\n")
      .filter((l) => l !== "").map((l) => JSON.parse(l)).filter((r) => r.event === "request");
    const sortedRecord = records.find((r) => r.pipeline === "sorted");
    assert(sortedRecord, "the sorted request's record");
    assertEquals([sortedRecord.status, sortedRecord.error_code], [502, "upstream_body_failed"]);
  } finally {
    await gw.stop();
    upstream.close();
  }
});
