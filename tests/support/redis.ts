/**
 * Debian's `redis-server` for tests: started on a free loopback port with a temporary directory
 * and no persistence, plain or over TLS (certificates from test_ca.ts), with a password when
 * asked. `kill()` ends it at once (SIGKILL) and `start()` starts it again on the same port.
 */
import { findBinary } from "./peers.ts";
import { freePort } from "./ports.ts";
import { type CapturedProcess, spawnCaptured, waitReady } from "./process.ts";
import { removeDir, tempDir } from "./temp.ts";
import type { IssuedCert } from "./test_ca.ts";
import { canConnect } from "./wait.ts";

/** Options of {@link startRedis}. */
export interface RedisOptions {
  /** `requirepass`. */
  password?: string;
  /** Serve TLS only, with this certificate (and require client certificates from `caPath`). */
  tls?: { cert: IssuedCert; caPath: string; requireClientCert?: boolean };
}

/** A running redis-server. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>` or `rediss://localhost:<port>`. */
  url: string;
  port: number;
  /** True while the process runs. */
  readonly running: boolean;
  /** SIGKILL, as a crash would (its data goes with it: no persistence). */
  kill(): Promise<void>;
  /** Starts it again on the same port (after `kill`). */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a server that takes connections and commands but does not answer. */
  pause(): void;
  resume(): void;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts redis-server (the test should have checked `requirePeer("...", "redis-server", ...)`). */
export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const binary = findBinary("redis-server");
  if (!binary) throw new Error("redis-server is missing: apt-get install redis-server");
  const dir = await tempDir("gw-redis-");
  const port = freePort();
  const args = [
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--protected-mode",
    "no",
    "--loglevel",
    "warning",
  ];
  if (options.password) args.push("--requirepass", options.password);
  if (options.tls) {
    args.push(
      "--port",
      "0",
      "--tls-port",
      String(port),
      "--tls-cert-file",
      options.tls.cert.certPath,
      "--tls-key-file",
      options.tls.cert.keyPath,
      "--tls-ca-cert-file",
      options.tls.caPath,
      "--tls-auth-clients",
      options.tls.requireClientCert ? "yes" : "no",
    );
  } else {
    args.push("--port", String(port));
  }
  let process: CapturedProcess | undefined;
  const start = async () => {
    const started = spawnCaptured(binary, args, { cwd: dir });
    process = started;
    await waitReady(started, {
      name: "redis-server",
      check: () => canConnect(port),
      description: `redis-server listening on 127.0.0.1:${port}`,
      timeoutMs: 20_000,
    });
  };
  await start();
  const kill = async () => {
    const running = process;
    process = undefined;
    if (!running || running.exited()) return;
    running.child.kill("SIGKILL");
    await running.stop();
  };
  const stop = async () => {
    const running = process;
    process = undefined;
    await running?.stop();
    await removeDir(dir);
  };
  return {
    url: options.tls ? `rediss://localhost:${port}` : `redis://127.0.0.1:${port}`,
    port,
    get running() {
      return process !== undefined && process.exited() === undefined;
    },
    kill,
    start,
    stop,
    pause: () => process?.child.kill("SIGSTOP"),
    resume: () => process?.child.kill("SIGCONT"),
    [Symbol.asyncDispose]: stop,
  };
}
