/** The systems under test of the HTTP proxy benchmark, started on free loopback ports. */

import {
  canConnect,
  findBinary,
  freePort,
  type GatewayProcess,
  type NginxProcess,
  removeDir,
  REPO_ROOT,
  spawnCaptured,
  startGateway,
  startNginx,
  tempDir,
  waitReady,
} from "../../tests/support/mod.ts";

/** Something started by the benchmark that must be stopped at the end. */
export interface Stoppable {
  stop(): Promise<unknown>;
}

/** nginx answering every request with `body` as `application/json` (the upstream). */
export function startUpstream(body: string): Promise<NginxProcess> {
  return startNginx({
    conf: `server {
    listen 127.0.0.1:{{port}} backlog=4096;
    keepalive_requests 1000000;
    location / {
      default_type application/json;
      return 200 '${body}';
    }
  }`,
  });
}

/** nginx `proxy_pass` to `upstreamPort` with a keepalive upstream pool (the comparison proxy). */
export function startNginxProxy(upstreamPort: number): Promise<NginxProcess> {
  return startNginx({
    conf: `upstream up {
    server 127.0.0.1:${upstreamPort};
    keepalive 128;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:{{port}} backlog=4096;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`,
  });
}

/**
 * Gateway TOML: `/api` -> `http` backend at `upstreamUrl`, `/echo` -> `echo` backend, served by
 * `workers` data-plane isolates (`[runtime] workers`, default 1).
 */
export function gatewayConfig(
  dataPort: number,
  mgmtPort: number,
  upstreamUrl: string,
  workers = 1,
): string {
  return `[runtime]
workers = ${workers}

[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}
prefix = "admin"

[logging]
level = "warn"

[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"

[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"

[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstreamUrl}"

[backends.e]
service = "echo"

[pipelines.proxy]
endpoints = ["api"]
backends = ["up"]

[pipelines.echo]
endpoints = ["echo"]
backends = ["e"]
`;
}

/** The gateway with {@link gatewayConfig}; `dataPort` is where its pipelines listen. */
export async function startBenchGateway(
  upstreamUrl: string,
  trace?: Trace,
  workers = 1,
): Promise<{ gateway: GatewayProcess; dataPort: number }> {
  const dataPort = freePort();
  const gateway = await startGateway({
    configText: gatewayConfig(dataPort, freePort(), upstreamUrl, workers),
    ...trace,
  });
  return { gateway, dataPort };
}

/** V8 tracing of a benchmarked Deno program: extra flags and a tap on its stdout. */
export interface Trace {
  v8Flags: string[];
  onStdout: (chunk: Uint8Array) => void;
}

/** The bare `Deno.serve` hello server (hello_server.ts) in its own process. */
export async function startBare(trace?: Trace): Promise<Stoppable & { url: string }> {
  const port = freePort();
  const process = spawnCaptured(Deno.execPath(), [
    "run",
    "--allow-net",
    `--v8-flags=${["--max-semi-space-size=2", ...(trace?.v8Flags ?? [])].join(",")}`,
    "bench/http_proxy/hello_server.ts",
    "--port",
    String(port),
  ], { cwd: REPO_ROOT, env: { DENO_NO_UPDATE_CHECK: "1" }, onStdout: trace?.onStdout });
  await waitReady(process, {
    name: "hello server",
    check: () => canConnect(port),
    description: `it listened on 127.0.0.1:${port}`,
    timeoutMs: 30_000,
  });
  return { url: `http://127.0.0.1:${port}`, stop: process.stop };
}

/**
 * The smallest correct Deno proxy we know: `Deno.serve` + our pooled HTTP/1.1 client, no
 * routing, envelope, metrics or logs (bench/http_proxy/minimal_proxy.ts), with the gateway's
 * runtime flags. What it reaches is the ceiling of any gateway on this runtime.
 */
export async function startMinimalProxy(
  upstreamUrl: string,
  trace?: Trace,
  workers = 1,
  /** `raw`, `raw-fields`: the runtime's floors instead of our client (raw_forwarder.ts). */
  client: "http1" | "raw" | "raw-fields" = "http1",
): Promise<Stoppable & { url: string }> {
  const port = freePort();
  const process = spawnCaptured(Deno.execPath(), [
    "run",
    "--allow-net",
    "--allow-read",
    "--unstable-net",
    `--v8-flags=${["--max-semi-space-size=2", ...(trace?.v8Flags ?? [])].join(",")}`,
    "bench/http_proxy/minimal_proxy.ts",
    "--client",
    client,
    "--upstream",
    upstreamUrl,
    "--port",
    String(port),
    "--workers",
    String(workers),
  ], {
    cwd: REPO_ROOT,
    env: { DENO_NO_UPDATE_CHECK: "1", MALLOC_MMAP_THRESHOLD_: "65536" },
    onStdout: trace?.onStdout,
  });
  await waitReady(process, {
    name: "minimal Deno proxy",
    check: () => canConnect(port),
    description: `it listened on 127.0.0.1:${port}`,
    timeoutMs: 30_000,
  });
  return { url: `http://127.0.0.1:${port}`, stop: process.stop };
}

/** A peer process listening on `url`. */
type Peer = Stoppable & { url: string };

/** Spawns `command`, waits until `port` accepts connections, removes `dir` when stopped. */
async function spawnPeer(
  name: string,
  command: string,
  args: string[],
  port: number,
  options: { env?: Record<string, string>; dir?: string; onStdout?: Trace["onStdout"] } = {},
): Promise<Peer> {
  const process = spawnCaptured(command, args, {
    cwd: REPO_ROOT,
    env: options.env,
    afterStop: options.dir ? () => removeDir(options.dir!) : undefined,
    onStdout: options.onStdout,
  });
  await waitReady(process, {
    name,
    check: () => canConnect(port),
    description: `it listened on 127.0.0.1:${port}`,
    timeoutMs: 30_000,
  });
  return { url: `http://127.0.0.1:${port}`, stop: process.stop };
}

/**
 * HAProxy (Debian's) in front of the upstream: one thread (as nginx runs one worker), HTTP
 * keep-alive both ways, server connections reused (`http-reuse always`), no logs.
 */
export async function startHaproxy(upstreamPort: number): Promise<Peer> {
  const binary = findBinary("haproxy");
  if (!binary) throw new Error("the benchmark needs 'haproxy': apt-get install haproxy");
  const dir = await tempDir("gw-haproxy-");
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/haproxy.cfg`,
    `global
  nbthread 1
  maxconn 8192
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 60s
  option http-keep-alive
frontend bench
  bind 127.0.0.1:${port}
  default_backend upstream
backend upstream
  http-reuse always
  server u1 127.0.0.1:${upstreamPort} maxconn 256
`,
  );
  return await spawnPeer("haproxy", binary, ["-db", "-f", `${dir}/haproxy.cfg`], port, { dir });
}

/** Caddy (Debian's) `reverse_proxy` to the upstream, on one OS thread of Go code (GOMAXPROCS=1). */
export async function startCaddy(upstreamPort: number): Promise<Peer> {
  const binary = findBinary("caddy");
  if (!binary) throw new Error("the benchmark needs 'caddy': apt-get install caddy");
  const dir = await tempDir("gw-caddy-");
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/Caddyfile`,
    `{
  admin off
  auto_https off
  storage file_system ${dir}/data
}
http://127.0.0.1:${port} {
  reverse_proxy 127.0.0.1:${upstreamPort}
}
`,
  );
  return await spawnPeer(
    "caddy",
    binary,
    ["run", "--adapter", "caddyfile", "--config", `${dir}/Caddyfile`],
    port,
    { dir, env: { GOMAXPROCS: "1", HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir } },
  );
}

/** Where the npm packages of the Node peer live (`npm ci --prefix` this; .ci/run does). */
export const NODE_PEERS_DIR = `${REPO_ROOT}/bench/http_proxy/peers`;

/** The minimal Node 20 proxy: node:http in, an undici Pool out (peers/node_undici_proxy.mjs). */
export async function startNodeUndiciProxy(upstreamUrl: string): Promise<Peer> {
  const node = findBinary("node");
  if (!node) throw new Error("the benchmark needs 'node' (Node 20)");
  try {
    await Deno.stat(`${NODE_PEERS_DIR}/node_modules/undici/package.json`);
  } catch {
    throw new Error(
      "the benchmark's Node peer needs its packages: npm ci --prefix bench/http_proxy/peers",
    );
  }
  const port = freePort();
  return await spawnPeer(
    "node undici proxy",
    node,
    [`${NODE_PEERS_DIR}/node_undici_proxy.mjs`, upstreamUrl, String(port)],
    port,
  );
}

/** The minimal Deno proxy forwarding with `fetch` (the runtime's own client). */
export async function startDenoFetchProxy(upstreamUrl: string, trace?: Trace): Promise<Peer> {
  const port = freePort();
  return await spawnPeer(
    "minimal Deno fetch proxy",
    Deno.execPath(),
    [
      "run",
      "--allow-net",
      `--v8-flags=${["--max-semi-space-size=2", ...(trace?.v8Flags ?? [])].join(",")}`,
      "bench/http_proxy/minimal_proxy.ts",
      "--client",
      "fetch",
      "--upstream",
      upstreamUrl,
      "--port",
      String(port),
    ],
    port,
    {
      env: { DENO_NO_UPDATE_CHECK: "1", MALLOC_MMAP_THRESHOLD_: "65536" },
      onStdout: trace?.onStdout,
    },
  );
}
