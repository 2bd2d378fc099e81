/** Runs a gateway in the test process on free loopback ports, from TOML text. */
import { Logger } from "../shared/log.ts";
import { createMetrics } from "../gateway/observability/metrics.ts";
import { Gateway } from "../gateway/runtime/mod.ts";
import type { Clock } from "../shared/clock.ts";
import { freePort as freeTcpPort } from "./support/mod.ts";

export { freePort as freeTcpPort } from "./support/mod.ts";
import { testManagementToken, withManagementToken } from "./support/mod.ts";

/** An `echo` pipeline under `/echo` (config TOML, without listeners). */
export const ECHO_PIPELINE = `
[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"

[backends.echo]
service = "echo"

[pipelines.echo]
endpoints = ["echo"]
backends = ["echo"]
`;

/** A gateway running in this process. */
export interface TestGateway {
  gateway: Gateway;
  /** Base URL of the data listener of network `main`. */
  url: string;
  /** Base URL of the management API. */
  mgmt: string;
  /** The management API's bearer token. */
  mgmtToken: string;
  /** `fetch` of a management path (`/admin/info`) with the token and a JSON content type. */
  mgmtFetch(path: string, init?: RequestInit): Promise<Response>;
  dataPort: number;
  mgmtPort: number;
  dir: string;
  configFile: string;
  /** Log lines written so far (JSON). */
  logs: string[];
  /** Replace the config file text (a watcher or /api/reload picks it up). */
  writeConfig(toml: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Start a gateway. `body` is TOML without `[network.main]`, `[management]` and `[logging]`,
 * which the harness adds with free ports; `{DIR}` in it is replaced by the temp directory.
 */
export async function startTestGateway(
  body: string,
  opts: {
    files?: Record<string, string>;
    logLevel?: string;
    /** Serve `network.main` over TLS with this certificate. */
    tls?: { certPath: string; keyPath: string };
    /** Extra keys of `[network.main]` (e.g. the connection guard's timeouts). */
    network?: string;
    dir?: string;
    /**
     * Data-plane isolates, over `[runtime] workers` (default: the config's, else one: the main
     * thread alone). A test of behaviour across isolates asks for them, here or in its config; the
     * others spare the start of a worker isolate (about a second of CPU) per gateway.
     */
    workers?: number;
    /**
     * Grace of `stop()` for requests in flight (default 0.05 s). A stop otherwise lasts up to the
     * listener's sweep (about 2 s) while the test's own `fetch` keeps an idle keep-alive
     * connection open, and the grace is what nearly every stop waits; a test of the drain passes
     * a longer one.
     */
    drainSeconds?: number;
    /** The clock of the gateway's alerts (a ManualClock drives their evaluation). */
    clock?: Clock;
  } = {},
): Promise<TestGateway> {
  const dir = opts.dir ?? await Deno.makeTempDir({ prefix: "gw-test-" });
  const dataPort = freeTcpPort();
  const mgmtPort = freeTcpPort();
  const tls = opts.tls
    ? `tls_cert_path = "${opts.tls.certPath}"\ntls_key_path = "${opts.tls.keyPath}"\n`
    : "";
  // Top-level keys of `b` (e.g. transforms_path) must come before any table: the body goes first.
  const head = (b: string) =>
    b.replaceAll("{DIR}", dir) +
    `\n[network.main]\nbind = "127.0.0.1"\nport = ${dataPort}\n${tls}${opts.network ?? ""}\n` +
    `[management]\nbind = "127.0.0.1"\nport = ${mgmtPort}\n\n` +
    `[logging]\nlevel = "${opts.logLevel ?? "info"}"\n`;
  for (const [name, text] of Object.entries(opts.files ?? {})) {
    const path = `${dir}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text.replaceAll("{DIR}", dir));
  }
  const configFile = `${dir}/gateway.toml`;
  await Deno.writeTextFile(configFile, head(body));
  const logs: string[] = [];
  const logger = new Logger({ level: "info", format: "json", sink: (l) => logs.push(l) });
  const mgmtToken = testManagementToken();
  const gateway = new Gateway({
    configFile,
    logger,
    metrics: createMetrics(),
    drainSeconds: opts.drainSeconds ?? 0.05,
    workers: opts.workers ?? (/^\s*workers\s*=/m.test(body) ? undefined : 1),
    clock: opts.clock,
    env: (name) => name === "GATEWAY_MANAGEMENT_TOKEN" ? mgmtToken : Deno.env.get(name),
  });
  await gateway.start();
  return {
    gateway,
    url: `${opts.tls ? "https" : "http"}://127.0.0.1:${dataPort}`,
    mgmt: `http://127.0.0.1:${mgmtPort}`,
    mgmtToken,
    mgmtFetch: (path, init) =>
      fetch(`http://127.0.0.1:${mgmtPort}${path}`, withManagementToken(init, mgmtToken)),
    dataPort,
    mgmtPort,
    dir,
    configFile,
    logs,
    async writeConfig(toml: string) {
      // Write then rename, as editors do, so a watcher never sees a half-written file.
      const tmp = `${configFile}.tmp`;
      await Deno.writeTextFile(tmp, head(toml));
      await Deno.rename(tmp, configFile);
    },
    async stop() {
      await gateway.shutdown();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A loopback upstream server for tests, recording what it received. */
export interface TestUpstream {
  url: string;
  port: number;
  received: { method: string; url: string; headers: Headers; body: Uint8Array }[];
  stop(): Promise<void>;
}

/** Start an upstream whose answers come from `handler` (default: echo of the request as JSON). */
export function startUpstream(
  handler?: (req: Request, body: Uint8Array) => Response | Promise<Response>,
): TestUpstream {
  const received: TestUpstream["received"] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = new Uint8Array(await req.arrayBuffer());
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (handler) return await handler(req, body);
      const u = new URL(req.url);
      return Response.json({
        method: req.method,
        path: u.pathname,
        query: u.search,
        headers: Object.fromEntries(req.headers),
        body: new TextDecoder().decode(body),
      });
    },
  );
  const port = server.addr.port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    stop: () => server.shutdown(),
  };
}

/** An upstream that holds every request until the test releases them. */
export interface HeldUpstream extends TestUpstream {
  /** Resolves when the first request has arrived (it is in flight through the gateway). */
  arrived: Promise<void>;
  /** Requests answered so far (none before `release`). */
  readonly answered: number;
  /** Lets every held request (and any later one) be answered. */
  release(): void;
}

/**
 * An upstream whose requests wait for `release()` and are then answered by `answer` (default: 200
 * "released"): a slow backend whose pace is an event of the test, not a sleep. `stop()` releases
 * what is still held first.
 */
export function startHeldUpstream(
  answer: () => Response = () => new Response("released"),
): HeldUpstream {
  const arrived = Promise.withResolvers<void>();
  const released = Promise.withResolvers<void>();
  let answered = 0;
  const upstream = startUpstream(async () => {
    arrived.resolve();
    await released.promise;
    answered++;
    return answer();
  });
  return {
    ...upstream,
    arrived: arrived.promise,
    get answered() {
      return answered;
    },
    release: () => released.resolve(),
    stop: () => {
      released.resolve();
      return upstream.stop();
    },
  };
}
