/** Starting the gateway executable as a child process for end-to-end tests and benchmarks. */

import { parse } from "smol-toml";
import { REPO_ROOT } from "./paths.ts";
import { spawnCaptured, waitReady } from "./process.ts";
import { removeDir, tempDir } from "./temp.ts";

/**
 * Environment the gateway runs with (as in `deno task start`): glibc's malloc keeps freed
 * body-sized buffers in its heap under its dynamic mmap threshold, which shows as RSS that grows
 * with every streamed megabyte; a fixed 64 KiB threshold returns them to the OS at once.
 */
export const GATEWAY_ENV: Record<string, string> = { MALLOC_MMAP_THRESHOLD_: "65536" };

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** The TOML configuration, written to `gateway.toml` in a temporary directory. */
  configText: string;
  /**
   * Extra environment variables of the gateway process. `GATEWAY_WORKERS` is 1 unless given here:
   * one isolate, the main thread (a config's `[runtime] workers` still wins), which spares the
   * start of worker isolates in tests that are not about them.
   */
  env?: Record<string, string>;
  /** Entry module, relative to the repository root (default `gateway/main.ts`). */
  entry?: string;
  /** How long to wait for the readiness probe (default 60 000 ms). */
  readyTimeoutMs?: number;
  /** V8 flags besides the default `--max-semi-space-size=2` (e.g. `--trace-gc-nvp`). */
  v8Flags?: string[];
  /** Flags of `deno run` before the entry module (e.g. `--cpu-prof`, `--cpu-prof-dir=DIR`). */
  denoFlags?: string[];
  /** Sees every chunk of the process's stdout (where V8's GC traces go). */
  onStdout?: (chunk: Uint8Array) => void;
  /**
   * The arguments of `deno` instead of the default `run --allow-all … gateway/main.ts --config
   * FILE`, given the written config file's path: e.g. the Dockerfile's ENTRYPOINT with its config
   * path replaced (`v8Flags`, `denoFlags` and `entry` are then not used).
   */
  runArgs?: (configPath: string) => string[];
}

/** A running gateway process. */
export interface GatewayProcess {
  /** The child process. */
  process: Deno.ChildProcess;
  /** Its process id. */
  pid: number;
  /** Temporary directory holding the config file (removed by `stop()`). */
  dir: string;
  /** Path of the written config file. */
  configPath: string;
  /** Base URL of the management API, e.g. `http://127.0.0.1:9090`. */
  mgmtUrl: string;
  /** Route prefix of the management API from the config (default `admin`). */
  mgmtPrefix: string;
  /** The management API's bearer token (`GATEWAY_MANAGEMENT_TOKEN` of the process). */
  mgmtToken: string;
  /** `fetch` of a management path (`/admin/info`) with the token and a JSON content type. */
  mgmtFetch(path: string, init?: RequestInit): Promise<Response>;
  /** Base URL of the data-plane listener on `networkPort`. */
  dataUrl(networkPort: number): string;
  /** The last output of the process (stderr, then stdout). */
  output(): string;
  /** Sends SIGTERM, waits for the exit (SIGKILL after 10 s), removes the temp dir. */
  stop(): Promise<Deno.CommandStatus>;
  /** Same as `stop()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Where the management API of a config listens: loopback URL and route prefix. */
export function managementAddress(configText: string): { url: string; prefix: string } {
  const config = parse(configText) as { management?: Record<string, unknown> };
  const management = config.management ?? {};
  const port = typeof management.port === "number" ? management.port : 9090;
  const bind = typeof management.bind === "string" ? management.bind : "127.0.0.1";
  const prefix = typeof management.prefix === "string" ? management.prefix : "admin";
  return { url: `http://${connectHost(bind)}:${port}`, prefix: prefix.replace(/^\/+|\/+$/g, "") };
}

/** The address to connect to for a listener bound to `bind` (wildcards become loopback). */
function connectHost(bind: string): string {
  if (bind === "0.0.0.0" || bind === "") return "127.0.0.1";
  if (bind === "::" || bind === "[::]") return "[::1]";
  return bind.includes(":") && !bind.startsWith("[") ? `[${bind}]` : bind;
}

/** True when GET `url` answers 200 (the body is discarded). */
export async function answers200(url: string): Promise<boolean> {
  try {
    // `connection: close`: a probe leaves no idle keep-alive connection behind, which the
    // gateway's stop would otherwise wait for (its listener closes idle ones at a sweep, ~1 s).
    const response = await fetch(url, {
      headers: { connection: "close" },
      signal: AbortSignal.timeout(2_000),
    });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * Writes `configText` to a temp dir, runs `deno run --allow-all --unstable-net gateway/main.ts
 * --config FILE` and resolves once `GET <management>/readyz` answers 200.
 */
export async function startGateway(options: GatewayOptions): Promise<GatewayProcess> {
  const { url: mgmtUrl, prefix: mgmtPrefix } = managementAddress(options.configText);
  const dir = await tempDir("gw-gateway-");
  // An empty GATEWAY_MANAGEMENT_TOKEN lets the gateway generate its own (read back below).
  let mgmtToken = options.env?.GATEWAY_MANAGEMENT_TOKEN ?? testManagementToken();
  const configPath = `${dir}/gateway.toml`;
  await Deno.writeTextFile(configPath, options.configText);
  const entry = options.entry ?? "gateway/main.ts";
  const process = spawnCaptured(
    Deno.execPath(),
    options.runArgs?.(configPath) ?? [
      "run",
      // As `deno task start`: node_modules is installed; Deno does not check it again per isolate.
      "--node-modules-dir=manual",
      "--allow-all",
      "--unstable-net",
      "--unstable-no-legacy-abort",
      // As `deno task start`: a small young generation keeps scavenge pauses (p99) short.
      `--v8-flags=${
        [
          "--max-semi-space-size=2",
          "--enable-experimental-regexp-engine",
          "--enable-experimental-regexp-engine-on-excessive-backtracks",
          ...(options.v8Flags ?? []),
        ].join(",")
      }`,
      ...(options.denoFlags ?? []),
      entry,
      "--config",
      configPath,
    ],
    {
      cwd: REPO_ROOT,
      env: {
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
        ...GATEWAY_ENV,
        GATEWAY_WORKERS: "1",
        GATEWAY_MANAGEMENT_TOKEN: mgmtToken,
        ...options.env,
      },
      afterStop: () => removeDir(dir),
      onStdout: options.onStdout,
    },
  );
  await waitReady(process, {
    name: "gateway",
    check: () => answers200(`${mgmtUrl}/readyz`),
    description: `${mgmtUrl}/readyz answered 200`,
    timeoutMs: options.readyTimeoutMs ?? 60_000,
    intervalMs: 100,
  });
  if (mgmtToken === "") {
    mgmtToken = (await Deno.readTextFile(`${dir}/state/management-token`).catch(() => "")).trim();
  }
  return {
    process: process.child,
    pid: process.child.pid,
    dir,
    configPath,
    mgmtUrl,
    mgmtPrefix,
    mgmtToken,
    mgmtFetch: (path, init) => fetch(`${mgmtUrl}${path}`, withManagementToken(init, mgmtToken)),
    dataUrl: (networkPort: number) => `http://127.0.0.1:${networkPort}`,
    output: process.output,
    stop: process.stop,
    [Symbol.asyncDispose]: async () => {
      await process.stop();
    },
  };
}

/** The management token of the test gateways this test process starts (random per process). */
export const TEST_MANAGEMENT_TOKEN = `test-${crypto.randomUUID()}-${crypto.randomUUID()}`;

/** A management token for a test gateway: {@link TEST_MANAGEMENT_TOKEN}. */
export function testManagementToken(): string {
  return TEST_MANAGEMENT_TOKEN;
}

/** `init` with `Authorization: Bearer <token>` and, for a body-carrying method, a JSON type. */
export function withManagementToken(
  init: RequestInit = {},
  token: string = TEST_MANAGEMENT_TOKEN,
): RequestInit {
  const headers = new Headers(init.headers);
  if (!headers.has("authorization")) headers.set("authorization", `Bearer ${token}`);
  const method = (init.method ?? "GET").toUpperCase();
  if (method !== "GET" && method !== "HEAD" && !headers.has("content-type")) {
    headers.set("content-type", "application/json");
  }
  return { ...init, headers };
}
