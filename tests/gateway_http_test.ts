/** End-to-end tests of the HTTP data plane: routing, backends, errors, limits, content types. */
import { waitFor, withManagementToken } from "./support/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { ECHO_PIPELINE, startHeldUpstream, startTestGateway, startUpstream } from "./harness.ts";

const ECHO = ECHO_PIPELINE;

function proxyConfig(baseUrl: string, extra = ""): string {
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[backends.up]
service = "http"
timeout_secs = 1
${extra}
[backends.up.options]
base_url = "${baseUrl}"

[pipelines.api]
endpoints = ["api"]
backends = ["up"]
`;
}

/** An `/api` endpoint to backend `up` over the given targets; `backend` adds keys/tables to it. */
function targetsConfig(targets: Record<string, string>, backend: string): string {
  const defs = Object.entries(targets).map(([name, url]) => `[targets.${name}]\nurl = "${url}"\n`)
    .join("");
  return `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
${defs}[backends.up]
service = "http"
targets = ${JSON.stringify(Object.keys(targets))}
${backend}
[pipelines.api]
endpoints = ["api"]
backends = ["up"]
`;
}

Deno.test("echo pipeline returns the request envelope with multi-value headers and query", async () => {
  const gw = await startTestGateway(ECHO);
  try {
    const headers = new Headers({ "content-type": "application/json" });
    headers.append("x-multi", "one");
    headers.append("x-multi", "two");
    const res = await fetch(`${gw.url}/echo/a/b?x=1&x=2&y=3`, {
      method: "POST",
      headers,
      body: JSON.stringify({ hello: "world" }),
    });
    assertEquals(res.status, 200);
    const id = res.headers.get("x-request-id");
    assert(id && id.length > 8, "x-request-id present");
    const body = await res.json();
    assertEquals(body.method, "POST");
    assertEquals(body.path, "/a/b");
    assertEquals(body.query, { x: ["1", "2"], y: "3" });
    assertEquals(body.headers["x-multi"], "one, two");
    assertEquals(body.data, { hello: "world" });
    assertEquals(body.pipeline, "echo");
    assertEquals(body.request_id, id);
    assertEquals(body.content.format, "json");
    assertEquals(body.content.size, 17);
  } finally {
    await gw.stop();
  }
});

Deno.test("an incoming X-Request-Id is kept; an invalid one is replaced", async () => {
  const gw = await startTestGateway(ECHO);
  try {
    let res = await fetch(`${gw.url}/echo`, { headers: { "x-request-id": "abc-123" } });
    await res.body?.cancel();
    assertEquals(res.headers.get("x-request-id"), "abc-123");
    res = await fetch(`${gw.url}/echo`, { headers: { "x-request-id": "bad id <script>" } });
    await res.body?.cancel();
    assert(res.headers.get("x-request-id") !== "bad id <script>");
  } finally {
    await gw.stop();
  }
});

Deno.test("no route gives a JSON 404 with the request id", async () => {
  const gw = await startTestGateway(ECHO);
  try {
    const res = await fetch(`${gw.url}/nowhere`);
    assertEquals(res.status, 404);
    assertEquals(res.headers.get("content-type"), "application/json");
    const body = await res.json();
    assertEquals(body.error.code, "no_route");
    assertEquals(body.error.request_id, res.headers.get("x-request-id"));
    // A prefix match must stop at a segment boundary.
    const res2 = await fetch(`${gw.url}/echoes`);
    await res2.body?.cancel();
    assertEquals(res2.status, 404);
  } finally {
    await gw.stop();
  }
});

Deno.test("longest path_prefix wins", async () => {
  const gw = await startTestGateway(`
[endpoints.outer]
service = "http"
[endpoints.outer.options]
path_prefix = "/a"
[endpoints.inner]
service = "http"
[endpoints.inner.options]
path_prefix = "/a/b"
[backends.echo]
service = "echo"
[pipelines.outer]
endpoints = ["outer"]
backends = ["echo"]
[pipelines.inner]
endpoints = ["inner"]
backends = ["echo"]
`);
  try {
    const inner = await (await fetch(`${gw.url}/a/b/c`)).json();
    assertEquals(inner.pipeline, "inner");
    assertEquals(inner.path, "/c");
    const outer = await (await fetch(`${gw.url}/a/bc`)).json();
    assertEquals(outer.pipeline, "outer");
    assertEquals(outer.path, "/bc");
  } finally {
    await gw.stop();
  }
});

Deno.test("http backend preserves method, path, query, headers, status and body", async () => {
  const up = startUpstream((req, body) =>
    new Response(body as BodyInit, {
      status: 201,
      headers: {
        "content-type": req.headers.get("content-type") ?? "application/octet-stream",
        "x-upstream": "yes",
        "x-seen-path": new URL(req.url).pathname + new URL(req.url).search,
        "connection": "keep-alive",
      },
    })
  );
  const gw = await startTestGateway(proxyConfig(up.url + "/base"));
  try {
    const headers = new Headers({
      "content-type": "text/plain",
      "x-custom": "1",
      "connection": "x-drop-me",
      "x-drop-me": "secret",
      "te": "trailers",
    });
    headers.append("x-custom", "2");
    const res = await fetch(`${gw.url}/api/p/q?k=1&k=2`, { method: "PUT", headers, body: "hi" });
    assertEquals(res.status, 201);
    assertEquals(await res.text(), "hi");
    assertEquals(res.headers.get("x-upstream"), "yes");
    assertEquals(res.headers.get("x-seen-path"), "/base/p/q?k=1&k=2");
    const seen = up.received[0];
    assertEquals(seen.method, "PUT");
    assertEquals(seen.headers.get("x-custom"), "1, 2");
    assertEquals(seen.headers.get("x-drop-me"), null);
    assertEquals(seen.headers.get("te"), null);
    assertEquals(seen.headers.get("x-forwarded-for"), "127.0.0.1");
    assertEquals(seen.headers.get("x-forwarded-proto"), "http");
    assertEquals(seen.headers.get("x-forwarded-host"), `127.0.0.1:${gw.dataPort}`);
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("upstream error statuses pass through unchanged", async () => {
  const up = startUpstream(() => new Response("nope", { status: 503 }));
  const gw = await startTestGateway(proxyConfig(up.url));
  try {
    const res = await fetch(`${gw.url}/api/x`);
    assertEquals(res.status, 503);
    assertEquals(await res.text(), "nope");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("a refused connection gives 502 backend_unavailable with the request id", async () => {
  const gw = await startTestGateway(proxyConfig("http://127.0.0.1:9", "retries = 0"));
  try {
    const res = await fetch(`${gw.url}/api/x`);
    assertEquals(res.status, 502);
    const body = await res.json();
    assertEquals(body.error.code, "backend_unavailable");
    assertEquals(body.error.request_id, res.headers.get("x-request-id"));
  } finally {
    await gw.stop();
  }
});

Deno.test("a slow backend gives 504 backend_timeout", async () => {
  // The upstream answers only when the test ends, well past the backend's 1 s timeout.
  const up = startHeldUpstream(() => new Response("late"));
  const gw = await startTestGateway(proxyConfig(up.url));
  try {
    const res = await fetch(`${gw.url}/api/slow`);
    assertEquals(res.status, 504);
    const body = await res.json();
    assertEquals(body.error.code, "backend_timeout");
    assertMatch(body.error.message, /within 1 s/);
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("max_body_size: exactly at the limit passes, one byte over is 413 (declared and streamed)", async () => {
  const gw = await startTestGateway(ECHO + `\n[proxy.content_limits]\nmax_body_size = 100\n`);
  try {
    const at = new Uint8Array(100);
    let res = await fetch(`${gw.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: at,
    });
    assertEquals(res.status, 200);
    assertEquals((await res.json()).content.size, 100);
    res = await fetch(`${gw.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: new Uint8Array(101),
    });
    assertEquals(res.status, 413);
    assertEquals((await res.json()).error.code, "payload_too_large");
    // Chunked: no Content-Length, the limit is enforced while reading.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(60));
        c.enqueue(new Uint8Array(41));
        c.close();
      },
    });
    res = await fetch(`${gw.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: stream,
    });
    assertEquals(res.status, 413);
    await res.body?.cancel();
  } finally {
    await gw.stop();
  }
});

Deno.test("a streamed body over the limit is cut on the way to the upstream with 413", async () => {
  const up = startUpstream();
  const gw = await startTestGateway(
    proxyConfig(up.url) + `\n[proxy.content_limits]\nmax_body_size = 1000\n`,
  );
  try {
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(400));
        c.close();
      },
    });
    const res = await fetch(`${gw.url}/api/upload`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: stream,
    });
    assertEquals(res.status, 413);
    assertEquals((await res.json()).error.code, "payload_too_large");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("malformed JSON gets 400 invalid_json when the body is read", async () => {
  const gw = await startTestGateway(ECHO);
  try {
    const res = await fetch(`${gw.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    assertEquals(res.status, 400);
    assertEquals((await res.json()).error.code, "invalid_json");
  } finally {
    await gw.stop();
  }
});

Deno.test("targets: round robin, failover when one is down, recovery after the cool-down", async () => {
  const a = startUpstream(() => new Response("a"));
  const b = startUpstream(() => new Response("b"));
  // One isolate: passive health and round-robin positions are per worker (docs/data-plane.md).
  const gw = await startTestGateway(
    targetsConfig(
      { a: `${a.url}`, b: `${b.url}` },
      `
max_failures = 1
cooldown_secs = 0.5
retries = 1
`,
    ),
    { workers: 1 },
  );
  try {
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) seen.push(await (await fetch(`${gw.url}/api/`)).text());
    assertEquals(seen.sort(), ["a", "a", "b", "b"]);
    await a.stop();
    // Every request still succeeds: the failed attempt is retried on b (GET is idempotent).
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${gw.url}/api/`);
      assertEquals(res.status, 200);
      assertEquals(await res.text(), "b");
    }
    const pipelines = await (await fetch(`${gw.mgmt}/admin/pipelines`, withManagementToken()))
      .json();
    const targets = pipelines.pipelines[0].backends[0].targets;
    assertEquals(targets.find((t: { name: string }) => t.name === "a").healthy, false);
    // Bring a back on its port: after the cool-down it takes traffic again.
    const revived = Deno.serve(
      { hostname: "127.0.0.1", port: a.port, onListen: () => {} },
      () => new Response("a"),
    );
    const after: string[] = [];
    await waitFor(async () => {
      after.push(await (await fetch(`${gw.url}/api/`)).text());
      return after.includes("a");
    }, { timeoutMs: 10_000, description: "a back in rotation" });
    await revived.shutdown();
  } finally {
    await gw.stop();
    await b.stop();
  }
});

Deno.test("all targets down gives 502 no_healthy_target (eject_last_target)", async () => {
  // One isolate: a target's passive health is per worker (docs/data-plane.md).
  const gw = await startTestGateway(
    targetsConfig(
      { a: "http://127.0.0.1:9" },
      `
max_failures = 1
cooldown_secs = 30
retries = 0
eject_last_target = true
`,
    ),
    { workers: 1 },
  );
  try {
    let res = await fetch(`${gw.url}/api/`);
    assertEquals(res.status, 502);
    assertEquals((await res.json()).error.code, "backend_unavailable");
    res = await fetch(`${gw.url}/api/`);
    assertEquals(res.status, 502);
    const body = await res.json();
    assertEquals(body.error.code, "no_healthy_target");
  } finally {
    await gw.stop();
  }
});

Deno.test("active health checks take a failing target out and bring it back", async () => {
  let healthy = true;
  const a = startUpstream((req) => {
    if (new URL(req.url).pathname === "/health") {
      return new Response(null, { status: healthy ? 200 : 500 });
    }
    return new Response("a");
  });
  const b = startUpstream(() => new Response("b"));
  const gw = await startTestGateway(targetsConfig(
    { a: `${a.url}`, b: `${b.url}` },
    `
[backends.up.health_check]
path = "/health"
interval_secs = 0.1
timeout_secs = 1
`,
  ));
  try {
    healthy = false;
    // Taken out once its checks fail: then every answer is b's (eight in a row, every isolate).
    let inARow = 0;
    await waitFor(async () => {
      const answer = await (await fetch(`${gw.url}/api/`)).text();
      inARow = answer === "b" ? inARow + 1 : 0;
      return inARow >= 8;
    }, { timeoutMs: 10_000, description: "a taken out by its failing health checks" });
    healthy = true;
    const seen = new Set<string>();
    await waitFor(async () => {
      seen.add(await (await fetch(`${gw.url}/api/`)).text());
      return seen.has("a");
    }, { timeoutMs: 10_000, description: "a back once its checks pass" });
  } finally {
    await gw.stop();
    await a.stop();
    await b.stop();
  }
});

Deno.test("tee backends receive the request; the primary answers; a required tee failure fails it", async () => {
  const primary = startUpstream(() => new Response("primary"));
  const tee = startUpstream(() => new Response("tee"));
  const config = (required: boolean, teeUrl: string) => `
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[backends.main]
service = "http"
[backends.main.options]
base_url = "${primary.url}"
[backends.copy]
service = "http"
required = ${required}
retries = 0
[backends.copy.options]
base_url = "${teeUrl}"
[pipelines.api]
endpoints = ["api"]
backends = ["main", "copy"]
`;
  const gw = await startTestGateway(config(false, tee.url));
  try {
    const res = await fetch(`${gw.url}/api/x`, { method: "POST", body: "payload" });
    assertEquals(await res.text(), "primary");
    await waitFor(() => Promise.resolve(tee.received.length > 0), {
      timeoutMs: 10_000,
      description: "the tee's copy",
    });
    assertEquals(new TextDecoder().decode(tee.received[0].body), "payload");
    assertEquals(new TextDecoder().decode(primary.received[0].body), "payload");

    await gw.writeConfig(config(false, "http://127.0.0.1:9"));
    assertEquals(
      (await (await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }))).json())
        .ok,
      true,
    );
    const ok = await fetch(`${gw.url}/api/x`, { method: "POST", body: "p" });
    assertEquals(ok.status, 200, "optional tee failure does not fail the request");
    await ok.body?.cancel();

    await gw.writeConfig(config(true, "http://127.0.0.1:9"));
    assertEquals(
      (await (await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }))).json())
        .ok,
      true,
    );
    const failed = await fetch(`${gw.url}/api/x`, { method: "POST", body: "p" });
    assertEquals(failed.status, 502);
    assertEquals((await failed.json()).error.code, "backend_unavailable");
  } finally {
    await gw.stop();
    await primary.stop();
    await tee.stop();
  }
});

Deno.test("metadata match routes a request to the matching backend", async () => {
  const gw = await startTestGateway(`
[endpoints.a]
service = "http"
[endpoints.a.options]
path_prefix = "/a"
[endpoints.b]
service = "http"
[endpoints.b.options]
path_prefix = "/b"
[backends.for_a]
service = "echo"
[backends.for_a.match]
endpoint = "a"
[backends.fallback]
service = "echo"
[pipelines.p]
endpoints = ["a", "b"]
backends = ["for_a", "fallback"]
`);
  try {
    // Both pipelines' responses come from echo; the access log names the backend used.
    await (await fetch(`${gw.url}/a/x`)).body?.cancel();
    await (await fetch(`${gw.url}/b/x`)).body?.cancel();
    const lines = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    assertEquals(lines.map((l) => l.backend), ["for_a", "fallback"]);
  } finally {
    await gw.stop();
  }
});

Deno.test("a proxied body keeps its Content-Length; HEAD answers the upstream's length", async () => {
  const up = startUpstream(() =>
    new Response("0123456789", { headers: { "content-type": "text/plain" } })
  );
  const gw = await startTestGateway(proxyConfig(up.url));
  try {
    const res = await fetch(`${gw.url}/api/file`);
    assertEquals(res.headers.get("content-length"), "10");
    assertEquals(res.headers.get("transfer-encoding"), null);
    assertEquals(await res.text(), "0123456789");
    const head = await fetch(`${gw.url}/api/file`, { method: "HEAD" });
    assertEquals(head.status, 200);
    assertEquals(head.headers.get("content-length"), "10");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("compressed upstream answers reach the client intact (http1 and auto)", async () => {
  const text = "compress me ".repeat(200);
  const gz = new Uint8Array(
    await new Response(
      new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer(),
  );
  const up = startUpstream((req) =>
    (req.headers.get("accept-encoding") ?? "").includes("gzip")
      ? new Response(gz, { headers: { "content-encoding": "gzip", "content-type": "text/plain" } })
      : new Response(text, { headers: { "content-type": "text/plain" } })
  );
  for (const protocol of ["http1", "auto"]) {
    const gw = await startTestGateway(
      proxyConfig(up.url).replace(
        `base_url = "${up.url}"`,
        `base_url = "${up.url}"\nupstream_protocol = "${protocol}"`,
      ),
    );
    try {
      // fetch sends Accept-Encoding: gzip and decompresses what it gets.
      const res = await fetch(`${gw.url}/api/x`);
      assertEquals(await res.text(), text, protocol);
    } finally {
      await gw.stop();
    }
  }
  await up.stop();
});

Deno.test("a client whose upload breaks off does not take the upstream target out", async () => {
  const up = startUpstream();
  // One isolate: its in-flight gauge says when a request is being read, and when it has ended.
  const gw = await startTestGateway(proxyConfig(up.url, "max_failures = 1"), { workers: 1 });
  const inFlight = () => gw.gateway.metrics.summary().pipelines.api?.in_flight ?? 0;
  const until = (done: () => boolean, description: string) =>
    waitFor(() => Promise.resolve(done()), { timeoutMs: 10_000, description });
  try {
    for (let i = 0; i < 3; i++) {
      // Promise 5000 bytes, send 10, then close: the gateway fails to read the body.
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
      await conn.write(
        new TextEncoder().encode(
          "POST /api/x HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\n" +
            "content-length: 5000\r\n\r\n0123456789",
        ),
      );
      await until(() => inFlight() === 1, "the upload being read");
      conn.close();
      await until(() => inFlight() === 0, "the broken upload ended");
    }
    const res = await fetch(`${gw.url}/api/after`);
    assertEquals(res.status, 200, "the target is still healthy");
    await res.body?.cancel();
  } finally {
    await gw.stop();
    await up.stop();
  }
});
