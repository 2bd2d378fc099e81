/**
 * HTTP/3 benchmark: the same gateway process serves one endpoint over HTTP/1.1 and HTTP/3; for
 * 1, 10 and 100 concurrent requests it prints requests/s and p99 of each (HTTP/3: one QUIC
 * connection, one stream per request; HTTP/1.1: Deno's pooled fetch client), then the throughput
 * of a 10 MiB download over each.
 *
 *   deno run -A --unstable-net bench/http3/main.ts [--seconds 3]
 */
import { Http3Client } from "../../gateway/http3/mod.ts";
import { makeH3Cert } from "../../tests/http3_support.ts";
import { freePort, startGateway } from "../../tests/support/mod.ts";
import { runLoad } from "./load.ts";

const secondsArg = Deno.args.indexOf("--seconds");
const SECONDS = secondsArg >= 0 ? Number(Deno.args[secondsArg + 1]) : 3;
const TEN_MIB = 10 * 1024 * 1024;
const BLOB = new Uint8Array(TEN_MIB).fill(7);

const dir = await Deno.makeTempDir({ prefix: "bench-h3-" });
const cert = await makeH3Cert(dir);
const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
  if (new URL(req.url).pathname === "/blob") return new Response(BLOB as BodyInit);
  return new Response('{"ok":true}', { headers: { "content-type": "application/json" } });
});
const port = freePort();
const gw = await startGateway({
  configText: `
[network.main]
bind = "127.0.0.1"
port = ${port}

[network.main.http3]
bind = "127.0.0.1"
port = ${port}
cert_path = "${cert.certPath}"
key_path = "${cert.keyPath}"

[management]
bind = "127.0.0.1"
port = ${freePort()}

[logging]
level = "error"

[endpoints.api]
service = "http"
options = { path_prefix = "/api" }

[backends.up]
service = "http"
options = { base_url = "http://127.0.0.1:${upstream.addr.port}" }

[pipelines.p]
endpoints = ["api"]
backends = ["up"]
`,
});

const h3 = await Http3Client.connect({
  hostname: "127.0.0.1",
  port,
  serverName: "localhost",
  caCerts: [cert.cert],
});
const h1Url = `http://127.0.0.1:${port}`;

async function h3Get(path: string): Promise<number> {
  const res = await h3.request({ method: "GET", authority: `localhost:${port}`, path });
  const bytes = new Uint8Array(await new Response(res.body).arrayBuffer());
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  return bytes.length;
}

async function h1Get(path: string): Promise<number> {
  const res = await fetch(h1Url + path);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  return bytes.length;
}

const fmt = (n: number, d = 0) => n.toFixed(d).padStart(9);
console.log(`gateway ${gw.pid}: HTTP/1.1 tcp/${port}, HTTP/3 udp/${port}; ${SECONDS} s per run`);
console.log("");
console.log("concurrency | HTTP/1.1 req/s |  p99 ms |  HTTP/3 req/s |  p99 ms | h3/h1");
try {
  // Warm up both paths.
  await runLoad(10, 0.5, async () => void await h1Get("/api/x"));
  await runLoad(10, 0.5, async () => void await h3Get("/api/x"));
  for (const c of [1, 10, 100]) {
    const a = await runLoad(c, SECONDS, async () => void await h1Get("/api/x"));
    const b = await runLoad(c, SECONDS, async () => void await h3Get("/api/x"));
    console.log(
      `${String(c).padStart(11)} | ${fmt(a.rps).padStart(14)} | ${fmt(a.p99Ms, 2)} | ${
        fmt(b.rps).padStart(13)
      } | ${fmt(b.p99Ms, 2)} | ${(b.rps / a.rps).toFixed(2)}` +
        (a.errors + b.errors ? `  (errors: h1 ${a.errors}, h3 ${b.errors})` : ""),
    );
  }
  console.log("");
  console.log("10 MiB download | MiB/s (best of 5) | mean ms");
  for (const [name, get] of [["HTTP/1.1", h1Get], ["HTTP/3", h3Get]] as const) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const n = await get("/api/blob");
      if (n !== TEN_MIB) throw new Error(`${name}: got ${n} bytes`);
      times.push(performance.now() - t);
    }
    const best = Math.min(...times);
    const mean = times.reduce((x, y) => x + y, 0) / times.length;
    console.log(
      `${name.padStart(15)} | ${fmt(10 / (best / 1000), 1).padStart(17)} | ${fmt(mean, 1)}`,
    );
  }
} finally {
  h3.close();
  await gw.stop();
  await upstream.shutdown();
  await Deno.remove(dir, { recursive: true });
}
