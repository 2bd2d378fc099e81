/** The five systems under test of the HTTP proxy benchmark, started on free loopback ports. */

import {
  canConnect,
  freePort,
  type GatewayProcess,
  type NginxProcess,
  REPO_ROOT,
  spawnCaptured,
  startGateway,
  startNginx,
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

/** Gateway TOML: `/api` -> `http` backend at `upstreamUrl`, `/echo` -> `echo` backend. */
export function gatewayConfig(dataPort: number, mgmtPort: number, upstreamUrl: string): string {
  return `[network.main]
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
): Promise<{ gateway: GatewayProcess; dataPort: number }> {
  const dataPort = freePort();
  const gateway = await startGateway({
    configText: gatewayConfig(dataPort, freePort(), upstreamUrl),
  });
  return { gateway, dataPort };
}

/** The bare `Deno.serve` hello server (hello_server.ts) in its own process. */
export async function startBare(): Promise<Stoppable & { url: string }> {
  const port = freePort();
  const process = spawnCaptured(Deno.execPath(), [
    "run",
    "--allow-net",
    "bench/http_proxy/hello_server.ts",
    "--port",
    String(port),
  ], { cwd: REPO_ROOT, env: { DENO_NO_UPDATE_CHECK: "1" } });
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
export async function startMinimalProxy(upstreamUrl: string): Promise<Stoppable & { url: string }> {
  const port = freePort();
  const process = spawnCaptured(Deno.execPath(), [
    "run",
    "--allow-net",
    "--v8-flags=--max-semi-space-size=2",
    "bench/http_proxy/minimal_proxy.ts",
    "--client",
    "http1",
    "--upstream",
    upstreamUrl,
    "--port",
    String(port),
  ], {
    cwd: REPO_ROOT,
    env: { DENO_NO_UPDATE_CHECK: "1", MALLOC_MMAP_THRESHOLD_: "65536" },
  });
  await waitReady(process, {
    name: "minimal Deno proxy",
    check: () => canConnect(port),
    description: `it listened on 127.0.0.1:${port}`,
    timeoutMs: 30_000,
  });
  return { url: `http://127.0.0.1:${port}`, stop: process.stop };
}
