/**
 * Debian's HAProxy on loopback as the load balancer in front of several gateways: HTTP mode,
 * round robin, a server taken out after one failed health check (every 200 ms) and a request
 * whose connection failed sent to another server (`retry-on conn-failure`, `redispatch`).
 */
import { findBinary } from "./peers.ts";
import { freePort } from "./ports.ts";
import { spawnCaptured, waitReady } from "./process.ts";
import { removeDir, tempDir } from "./temp.ts";
import { canConnect } from "./wait.ts";

/** Options of {@link startHaproxy}. */
export interface HaproxyOptions {
  /** The servers' ports on 127.0.0.1. */
  ports: number[];
  /** Path each server is checked at (GET; 2xx healthy); default: a TCP connect. */
  checkPath?: string;
  /** Port each server's health check goes to, by index (default the server's port). */
  checkPorts?: number[];
}

/** A running HAProxy. */
export interface HaproxyProcess {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  output(): string;
  stop(): Promise<Deno.CommandStatus>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The binary of Debian's `haproxy` package, or undefined. */
export function haproxyBinary(): string | undefined {
  return findBinary("haproxy");
}

/** Starts `haproxy -db -f <tmp>/haproxy.cfg` on a free port. */
export async function startHaproxy(options: HaproxyOptions): Promise<HaproxyProcess> {
  const binary = haproxyBinary() ?? "/usr/sbin/haproxy";
  const dir = await tempDir("gw-haproxy-");
  const port = freePort();
  const servers = options.ports.map((p, i) => {
    const checkPort = options.checkPorts?.[i];
    return `  server g${i + 1} 127.0.0.1:${p} check inter 200ms fall 1 rise 2${
      checkPort ? ` port ${checkPort}` : ""
    }`;
  }).join("\n");
  await Deno.writeTextFile(
    `${dir}/haproxy.cfg`,
    `global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch
  retry-on conn-failure empty-response
frontend gateways
  bind 127.0.0.1:${port}
  default_backend gateways
backend gateways
  balance roundrobin
${options.checkPath ? `  option httpchk GET ${options.checkPath}\n` : ""}${servers}
`,
  );
  const process = spawnCaptured(binary, ["-db", "-f", `${dir}/haproxy.cfg`], {
    afterStop: () => removeDir(dir),
  });
  await waitReady(process, {
    name: "haproxy",
    check: () => canConnect(port),
    description: `it listened on 127.0.0.1:${port}`,
    timeoutMs: 15_000,
  });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    output: process.output,
    stop: process.stop,
    [Symbol.asyncDispose]: async () => {
      await process.stop();
    },
  };
}
