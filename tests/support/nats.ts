/**
 * Debian's `nats-server` with JetStream on loopback: one server, or a cluster of several (routes
 * between them), each with its config file and store in a temporary directory. Ready once every
 * server answers its monitoring `/healthz` and JetStream answers an account request (its meta
 * leader elected). A server can be killed (SIGKILL) and started again on the same store.
 */
import { connect, type ConnectionOptions } from "nats";
import { findBinary } from "./peers.ts";
import { freePort } from "./ports.ts";
import { type CapturedProcess, spawnCaptured, waitReady } from "./process.ts";
import { removeDir, tempDir } from "./temp.ts";
import { waitFor } from "./wait.ts";

/** Options of {@link startNats}. */
export interface NatsOptions {
  /** Servers (1: a single server; 3: a cluster). Default 1. */
  size?: number;
  /** Client credentials the servers require (none by default); `nkey`: a user's public NKey. */
  auth?: { user: string; password: string } | { token: string } | { nkey: string };
  /** TLS of the client port (PEM paths); `ca` with `verify` asks clients for certificates. */
  tls?: { certPath: string; keyPath: string; caPath?: string; verify?: boolean };
  /** What the helper's own client adds to connect (TLS files, an NKey authenticator). */
  client?: Partial<ConnectionOptions>;
  /** How long to wait for the cluster (default 30 000 ms). */
  readyTimeoutMs?: number;
}

/** One server of a running cluster. */
export interface NatsNode {
  name: string;
  /** Client port. */
  port: number;
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  /** True while its process runs. */
  running(): boolean;
  /** SIGKILL, as a crash; waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same store and ports; resolves once it answers `/healthz`. */
  restart(): Promise<void>;
}

/** A running server or cluster. */
export interface NatsCluster {
  nodes: NatsNode[];
  /** Every server's client URL. */
  servers: string[];
  /** Client options for the test's own connections (servers and credentials). */
  clientOptions(): ConnectionOptions;
  /** The servers' output, for failure messages. */
  output(): string;
  /** Stops every server and removes the temporary directory. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The binary of Debian's `nats-server` package, or undefined. */
export function natsServerBinary(): string | undefined {
  return findBinary("nats-server");
}

function authBlock(auth: NatsOptions["auth"]): string {
  if (!auth) return "";
  if ("token" in auth) return `authorization { token: ${JSON.stringify(auth.token)} }\n`;
  if ("nkey" in auth) return `authorization { users: [ { nkey: ${auth.nkey} } ] }\n`;
  return `authorization { user: ${JSON.stringify(auth.user)}, password: ${
    JSON.stringify(auth.password)
  } }\n`;
}

function tlsBlock(tls: NatsOptions["tls"]): string {
  if (!tls) return "";
  return `tls {\n  cert_file: ${JSON.stringify(tls.certPath)}\n  key_file: ${
    JSON.stringify(tls.keyPath)
  }\n${tls.caPath ? `  ca_file: ${JSON.stringify(tls.caPath)}\n` : ""}${
    tls.verify ? "  verify: true\n" : ""
  }}\n`;
}

/**
 * Starts `size` JetStream servers on free loopback ports (a cluster when more than one); tried
 * again on new ports when one was taken meanwhile (tests run in parallel).
 */
export async function startNats(options: NatsOptions = {}): Promise<NatsCluster> {
  for (let attempt = 1;; attempt++) {
    try {
      return await startNatsOnce(options);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/i.test((err as Error).message)) throw err;
    }
  }
}

async function startNatsOnce(options: NatsOptions): Promise<NatsCluster> {
  const binary = natsServerBinary() ?? "/usr/sbin/nats-server";
  const size = options.size ?? 1;
  const dir = await tempDir("gw-nats-");
  const specs = Array.from({ length: size }, (_, i) => ({
    name: `n${i + 1}`,
    port: freePort(),
    cluster: freePort(),
    http: freePort(),
  }));
  const processes = new Map<string, CapturedProcess>();
  const start = async (spec: typeof specs[number]) => {
    const routes = specs.filter((s) => s !== spec).map((s) =>
      `nats-route://127.0.0.1:${s.cluster}`
    );
    const conf = `server_name: ${spec.name}
listen: 127.0.0.1:${spec.port}
http: 127.0.0.1:${spec.http}
${authBlock(options.auth)}${tlsBlock(options.tls)}jetstream {
  store_dir: ${JSON.stringify(`${dir}/${spec.name}`)}
  max_memory_store: 64MB
  max_file_store: 100GB
}
${
      size > 1
        ? `cluster {
  name: gwtest
  listen: 127.0.0.1:${spec.cluster}
  routes: [${routes.join(", ")}]
}
`
        : ""
    }`;
    const path = `${dir}/${spec.name}.conf`;
    await Deno.writeTextFile(path, conf);
    const p = spawnCaptured(binary, ["-c", path]);
    processes.set(spec.name, p);
    await waitReady(p, {
      name: `nats-server ${spec.name}`,
      check: async () => {
        try {
          const r = await fetch(`http://127.0.0.1:${spec.http}/healthz`, {
            signal: AbortSignal.timeout(1_000),
          });
          await r.body?.cancel();
          return r.status === 200;
        } catch {
          return false;
        }
      },
      description: `its /healthz answered 200 on 127.0.0.1:${spec.http}`,
      timeoutMs: options.readyTimeoutMs ?? 30_000,
      intervalMs: 100,
    });
  };
  const clientOptions = (): ConnectionOptions => ({
    servers: specs.map((s) => `127.0.0.1:${s.port}`),
    ...(options.auth && "token" in options.auth ? { token: options.auth.token } : {}),
    ...(options.auth && "user" in options.auth
      ? { user: options.auth.user, pass: options.auth.password }
      : {}),
    ...options.client,
  });
  const stop = async () => {
    await Promise.all([...processes.values()].map((p) => p.stop()));
    await removeDir(dir);
  };
  try {
    // Started together: each waits for routes to the others to elect JetStream's meta leader.
    await Promise.all(specs.map(start));
    await waitJetStream(clientOptions(), options.readyTimeoutMs ?? 30_000);
  } catch (err) {
    const out = [...processes.values()].map((p) => p.output()).join("\n");
    await stop();
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  const nodes: NatsNode[] = specs.map((spec) => ({
    name: spec.name,
    port: spec.port,
    url: `nats://127.0.0.1:${spec.port}`,
    running: () => !processes.get(spec.name)!.exited(),
    kill: async () => {
      const p = processes.get(spec.name)!;
      try {
        p.child.kill("SIGKILL");
      } catch {
        // already gone
      }
      await p.stop();
    },
    restart: () => start(spec),
  }));
  return {
    nodes,
    servers: nodes.map((n) => n.url),
    clientOptions,
    output: () => [...processes.values()].map((p) => p.output()).join("\n"),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** Waits until JetStream answers an account request through `options`' servers. */
export async function waitJetStream(options: ConnectionOptions, timeoutMs: number): Promise<void> {
  await waitFor(async () => {
    try {
      const nc = await connect({ ...options, timeout: 2_000 });
      try {
        const jsm = await nc.jetstreamManager({ timeout: 2_000 });
        await jsm.getAccountInfo();
        return true;
      } finally {
        await nc.close();
      }
    } catch {
      return false;
    }
  }, { timeoutMs, intervalMs: 200, description: "JetStream to answer (its meta leader elected)" });
}
