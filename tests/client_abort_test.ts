/**
 * A client that goes away stops the work done for it: under the slow-client guard
 * (shared/net/guarded_listener.ts) the runtime still aborts a pending request's signal, and
 * through the gateway the backend call (linked to it once it has lasted 100 ms) closes its
 * upstream connection at once instead of at the backend timeout. And the guard's shutdown: what is in
 * flight finishes, a stalled upload is cut rather than waited for. An upload the client aborts
 * mid-body (h2 or HTTP/1.1) is its own outcome in the log and the audit trail: 499 client_closed.
 */
import { assertEquals } from "./assert.ts";
import { clientOf, DEFAULT_GUARD, guardedServe } from "../shared/net/mod.ts";
import { startTestGateway } from "./harness.ts";
import { connectH2c } from "./support/h2c.ts";
import { canConnect, freePort, requirePeer, startGateway, waitFor } from "./support/mod.ts";

/** Connects, sends a request head, and closes once `reached` (the request got there) resolves. */
async function requestAndLeave(port: number, path: string, reached: Promise<unknown>) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  await reached;
  conn.close();
}

/**
 * `promise`, or "gave up" after `ms`: a bound on a hang, far beyond "at once" and far below the
 * timeouts that would end the wait otherwise (not a window the event must fall in).
 */
function orGiveUp<T>(promise: Promise<T>, ms: number): Promise<T | "gave up"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<"gave up">((resolve) => timer = setTimeout(() => resolve("gave up"), ms)),
  ]).finally(() => clearTimeout(timer));
}

Deno.test("guarded server: a pending handler's request signal aborts when the client leaves", async () => {
  const aborted = Promise.withResolvers<string>();
  const arrived = Promise.withResolvers<void>();
  const server = guardedServe(
    { hostname: "127.0.0.1", port: 0, guard: DEFAULT_GUARD },
    (req, info) => {
      assertEquals(info.remoteAddr.hostname, "127.0.0.1");
      if (new URL(req.url).pathname === "/fast") return new Response("ok");
      arrived.resolve();
      return new Promise<Response>((resolve) => {
        req.signal.addEventListener("abort", () => {
          aborted.resolve((req.signal.reason as DOMException).name);
          resolve(new Response("gone"));
        });
      });
    },
  );
  try {
    // Two requests on one keep-alive connection.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    const twice = "GET /fast HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n";
    await conn.write(new TextEncoder().encode(twice));
    const buf = new Uint8Array(4096);
    let text = "";
    while ((text.match(/HTTP\/1\.1 200/g) ?? []).length < 2) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    assertEquals((text.match(/HTTP\/1\.1 200/g) ?? []).length, 2);
    conn.close();

    await requestAndLeave(server.addr.port, "/slow", arrived.promise);
    // At once: not at the guard's idle timeout, nor when the server stops.
    assertEquals(await orGiveUp(aborted.promise, 10_000), "AbortError");
  } finally {
    await server.shutdown();
  }
});

Deno.test("gateway: a client leaving mid-request closes the backend's upstream connection at once", async () => {
  const upstream = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  // The upstream reads the request and never answers; it notes when the gateway hangs up.
  const reached = Promise.withResolvers<void>();
  const hungUp = (async () => {
    const conn = await upstream.accept();
    const buf = new Uint8Array(4096);
    try {
      while ((await conn.read(buf)) !== null) reached.resolve(); // the request, then nothing
    } catch {
      // reset: hung up as well
    }
    return "hung up";
  })();
  const dataPort = freePort();
  const gateway = await startGateway({
    configText: `[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${freePort()}

[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[backends.slow]
service = "http"
timeout_secs = 60
[backends.slow.options]
base_url = "http://127.0.0.1:${(upstream.addr as Deno.NetAddr).port}"

[pipelines.p]
endpoints = ["api"]
backends = ["slow"]
`,
  });
  try {
    await requestAndLeave(dataPort, "/api/wait", reached.promise);
    // At once, not at the backend's 60 s timeout.
    assertEquals(await orGiveUp(hungUp, 10_000), "hung up", "the upstream connection stayed open");
  } finally {
    await gateway.stop();
    upstream.close();
  }
});

Deno.test("guarded server: shutdown lets a request in flight finish, and a stalled upload does not hold it", async () => {
  const events: string[] = [];
  const arrived = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const server = guardedServe(
    {
      hostname: "127.0.0.1",
      port: 0,
      guard: { headerTimeoutMs: 5_000, idleTimeoutMs: 1_000, maxConnectionsPerIp: 10 },
    },
    async () => {
      events.push("request");
      arrived.resolve();
      await release.promise;
      events.push("answered");
      return new Response("done");
    },
  );
  const port = server.addr.port;
  const answer = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.text());
  await arrived.promise;
  const stopped = server.shutdown().then(() => events.push("stopped"));
  // The shutdown has begun (new connections are refused) while the request is in flight.
  await waitFor(async () => !(await canConnect(port)), {
    timeoutMs: 10_000,
    description: "the listener closed",
  });
  release.resolve();
  assertEquals(await answer, "done");
  await stopped;
  assertEquals(events, ["request", "answered", "stopped"], "shutdown waited for the answer");

  const reading = Promise.withResolvers<void>();
  const stalled = guardedServe(
    {
      hostname: "127.0.0.1",
      port: 0,
      guard: { headerTimeoutMs: 5_000, idleTimeoutMs: 1_000, maxConnectionsPerIp: 10 },
    },
    async (req, info) => {
      reading.resolve();
      const body = clientOf(info)!.track(req.body!);
      const bytes = await new Response(body).arrayBuffer().catch(() => null);
      return new Response(bytes === null ? "cut" : "whole");
    },
  );
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: stalled.addr.port });
  await conn.write(
    new TextEncoder().encode("POST /u HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nhalf"),
  );
  await reading.promise;
  // Without a grace the shutdown waits for what is in flight: the guard must cut the stalled
  // upload (its idle timeout is 1 s), or the shutdown never ends.
  assertEquals(await orGiveUp(stalled.shutdown(), 10_000), undefined, "a stalled upload held it");
  conn.close();
});

Deno.test({
  name:
    "gateway: an upload the client aborts mid-body is logged and audited as 499 client_closed (h2 and HTTP/1.1)",
  ignore: !requirePeer("client abort tests", "curl", "curl"),
  fn: uploadAborts,
});

/** Uploads aborted by curl (h2), by an h2 stream reset and by a closed HTTP/1.1 connection. */
async function uploadAborts(): Promise<void> {
  // An upstream that reads what it is sent and never answers.
  const upstream = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  void (async () => {
    for await (const conn of upstream) {
      void (async () => {
        const buf = new Uint8Array(16 * 1024);
        try {
          while ((await conn.read(buf)) !== null) { /* read on */ }
        } catch {
          // reset
        }
      })();
    }
  })();
  const gw = await startTestGateway(
    `
[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"
[endpoints.queued]
service = "http"
[endpoints.queued.options]
path_prefix = "/queued"
[endpoints.proxied]
service = "http"
[endpoints.proxied.options]
path_prefix = "/proxied"
[backends.echo]
service = "echo"
[backends.later]
service = "http"
[backends.later.options]
base_url = "http://127.0.0.1:${(upstream.addr as Deno.NetAddr).port}"
[backends.later.queue]
dir = "{DIR}/queue"
[backends.upstream]
service = "http"
timeout_secs = 60
[backends.upstream.options]
base_url = "http://127.0.0.1:${(upstream.addr as Deno.NetAddr).port}"
[pipelines.echo]
endpoints = ["echo"]
backends = ["echo"]
[pipelines.queued]
endpoints = ["queued"]
backends = ["later"]
[pipelines.proxied]
endpoints = ["proxied"]
backends = ["upstream"]
[audit]
file = "audit/audit.jsonl"
flush_interval_ms = 20
`,
    // One isolate: the pipelines' in-flight gauges say when a request is being read.
    { workers: 1 },
  );
  const enc = new TextEncoder();
  const inFlight = (pipeline: string) =>
    gw.gateway.metrics.summary().pipelines[pipeline]?.in_flight ?? 0;
  /** Resolves once the gateway is reading the body of a request to `pipeline`. */
  const reading = (pipeline: string) =>
    waitFor(() => Promise.resolve(inFlight(pipeline) === 1), {
      timeoutMs: 10_000,
      description: `a request to ${pipeline} in flight`,
    });
  const aborts: Record<string, (pipeline: string) => Promise<void>> = {
    // curl, killed mid-upload: the h2 connection goes with it.
    "h2 (curl killed)": async (pipeline) => {
      const child = new Deno.Command("curl", {
        args: [
          "-sS",
          "--http2-prior-knowledge",
          "-T",
          "-",
          "-X",
          "POST",
          `${gw.url}/${pipeline}/x`,
        ],
        stdin: "piped",
        stdout: "null",
        stderr: "null",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(enc.encode("[" + " ".repeat(4095)));
      await reading(pipeline);
      child.kill("SIGKILL");
      await child.status;
    },
    // The stream reset, the connection kept.
    "h2 (RST_STREAM)": async (pipeline) => {
      const h2 = await connectH2c(gw.dataPort);
      await h2.headers(1, [
        [":method", "POST"],
        [":scheme", "http"],
        [":path", `/${pipeline}/x`],
        [":authority", "gateway.test"],
        ["content-type", "application/json"],
      ]);
      await h2.data(1, enc.encode("[" + " ".repeat(4095)));
      await reading(pipeline);
      await h2.reset(1);
      await waitFor(() => Promise.resolve(inFlight(pipeline) === 0), {
        timeoutMs: 10_000,
        description: `the reset request to ${pipeline} ended`,
      });
      h2.close();
    },
    // Half of a declared body, then the connection closed.
    "HTTP/1.1": async (pipeline) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.dataPort });
      await conn.write(enc.encode(
        `POST /${pipeline}/x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: 200000\r\n\r\n[${" ".repeat(99_999)}`,
      ));
      await reading(pipeline);
      conn.close();
    },
  };
  try {
    const expected: string[] = [];
    for (const pipeline of ["echo", "queued", "proxied"]) {
      for (const [how, abort] of Object.entries(aborts)) {
        await abort(pipeline);
        expected.push(`${pipeline} ${how}`);
        // Its audit record is written before the next request starts.
        await waitFor(async () => (await auditRecords(gw.dir)).length === expected.length, {
          timeoutMs: 10_000,
          description: `the audit record of ${pipeline} ${how}`,
        });
      }
    }
    const records = await auditRecords(gw.dir);
    for (const [i, r] of records.entries()) {
      assertEquals([r.pipeline, r.status, r.error_code], [
        expected[i].split(" ")[0],
        499,
        "client_closed",
      ], expected[i]);
    }
    // Logged as what it is: a request line with the code, no error (nothing of ours failed). The
    // request line and the audit record are written apart: the last line may come just after.
    const requestLines = () => gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    await waitFor(() => Promise.resolve(requestLines().length >= expected.length), {
      timeoutMs: 10_000,
      description: "a request line for each aborted upload",
    });
    const lines = gw.logs.map((l) => JSON.parse(l));
    const requests = lines.filter((l) => l.msg === "request");
    assertEquals(requests.length, expected.length);
    for (const l of requests) assertEquals([l.status, l.error_code], [499, "client_closed"]);
    assertEquals(lines.filter((l) => l.level === "error"), []);
    // The queue kept nothing of the aborted bodies (a reset h2 body ends as if it were whole).
    assertEquals([...Deno.readDirSync(`${gw.dir}/queue/ready`)], []);
  } finally {
    await gw.stop();
    upstream.close();
  }
}

/** The request records of the audit trail in `dir/audit`, in order. */
async function auditRecords(dir: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${dir}/audit/audit.jsonl`).catch(() => "");
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    .filter((r) => r.event === "request");
}
