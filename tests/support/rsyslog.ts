/**
 * Debian's `rsyslogd` as a syslog collector for tests: a configuration written to a temporary
 * directory, `imtcp` on a free loopback port over TLS (the `gtls` driver of rsyslog-gnutls,
 * RFC 5425 octet-counted frames; client certificates required when asked) or plain TCP, and `imudp`
 * when asked. Every message it takes is written to `messages.jsonl` as one JSON object of the
 * fields rsyslog parsed (RFC 5424: pri, timestamp, hostname, app-name, procid, msgid, structured
 * data, msg), so a test sees what the collector understood, not what was sent.
 */
import { decidePeer, findBinary, isCi } from "./peers.ts";
import { freePort } from "./ports.ts";
import { type CapturedProcess, spawnCaptured, waitReady } from "./process.ts";
import { removeDir, tempDir } from "./temp.ts";
import type { IssuedCert } from "./test_ca.ts";
import { canConnect } from "./wait.ts";

/** Where Debian's packages put rsyslog's modules. */
const MODULE_DIRS = [
  "/usr/lib/x86_64-linux-gnu/rsyslog",
  "/usr/lib/aarch64-linux-gnu/rsyslog",
  "/usr/lib/rsyslog",
];

/** The GnuTLS network stream driver of rsyslog-gnutls, if installed. */
function gtlsDriver(): string | undefined {
  for (const dir of MODULE_DIRS) {
    try {
      if (Deno.statSync(`${dir}/lmnsd_gtls.so`).isFile) return `${dir}/lmnsd_gtls.so`;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * True when rsyslogd and its GnuTLS driver are installed; missing, skipped with a message or,
 * under CI=true, thrown (as requirePeer).
 */
export function requireRsyslog(name: string): boolean {
  for (
    const decision of [
      decidePeer(name, "rsyslogd", "rsyslog", findBinary("rsyslogd"), isCi()),
      decidePeer(name, "lmnsd_gtls.so", "rsyslog-gnutls", gtlsDriver(), isCi()),
    ]
  ) {
    if (decision.action === "fail") throw decision.error;
    if (decision.action === "skip") {
      console.warn(decision.message);
      return false;
    }
  }
  return true;
}

/** One message as rsyslog parsed it. */
export interface CollectedMessage {
  pri: string;
  timestamp: string;
  hostname: string;
  app_name: string;
  procid: string;
  msgid: string;
  structured_data: string;
  msg: string;
  /** The protocol version rsyslog read (`1` for RFC 5424). */
  protocol_version: string;
}

/** Options of {@link startRsyslog}. */
export interface RsyslogOptions {
  /** Serve TLS with this certificate; `clientCa`: require client certificates it signed. */
  tls?: { cert: IssuedCert; caPath: string; requireClientCert?: boolean };
  /** Also listen for UDP (RFC 5426) on a port of its own. */
  udp?: boolean;
}

/** A running rsyslogd. */
export interface Rsyslog {
  /** The TCP/TLS port. */
  port: number;
  /** The UDP port (with `udp`). */
  udpPort?: number;
  /** The messages written so far. */
  messages(): Promise<CollectedMessage[]>;
  /** True while the process runs. */
  readonly running: boolean;
  /** Stops the process (SIGTERM, waiting for its exit); `start` runs it again on the same ports. */
  halt(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The fields of a message, as JSON (rsyslog's `jsonf` format escapes each value). */
const TEMPLATE = `template(name="gatewayJson" type="list") {
  constant(value="{")
  property(name="pri" format="jsonf" outname="pri") constant(value=",")
  property(name="timereported" dateFormat="rfc3339" format="jsonf" outname="timestamp")
  constant(value=",")
  property(name="hostname" format="jsonf" outname="hostname") constant(value=",")
  property(name="app-name" format="jsonf" outname="app_name") constant(value=",")
  property(name="procid" format="jsonf" outname="procid") constant(value=",")
  property(name="msgid" format="jsonf" outname="msgid") constant(value=",")
  property(name="structured-data" format="jsonf" outname="structured_data") constant(value=",")
  property(name="protocol-version" format="jsonf" outname="protocol_version")
  constant(value=",")
  property(name="msg" format="jsonf" outname="msg")
  constant(value="}\\n")
}`;

/** Starts rsyslogd (the test should have checked `requirePeer(..., "rsyslogd", "rsyslog")`). */
export async function startRsyslog(options: RsyslogOptions = {}): Promise<Rsyslog> {
  const binary = findBinary("rsyslogd");
  if (!binary) throw new Error("rsyslogd is missing: apt-get install rsyslog rsyslog-gnutls");
  const dir = await tempDir("gw-rsyslog-");
  const port = freePort();
  const udpPort = options.udp ? freePort() : undefined;
  const out = `${dir}/messages.jsonl`;
  const tls = options.tls;
  const conf = [
    `global(workDirectory="${dir}" maxMessageSize="64k"` +
    (tls
      ? ` defaultNetstreamDriver="gtls" defaultNetstreamDriverCAFile="${tls.caPath}"` +
        ` defaultNetstreamDriverCertFile="${tls.cert.certPath}"` +
        ` defaultNetstreamDriverKeyFile="${tls.cert.keyPath}"`
      : "") +
    ")",
    tls
      ? `module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1" ` +
        `streamDriver.authMode="${tls.requireClientCert ? "x509/certvalid" : "anon"}")`
      : `module(load="imtcp")`,
    `input(type="imtcp" address="127.0.0.1" port="${port}")`,
    ...(udpPort
      ? [`module(load="imudp")`, `input(type="imudp" address="127.0.0.1" port="${udpPort}")`]
      : []),
    TEMPLATE,
    `action(type="omfile" file="${out}" template="gatewayJson")`,
    "",
  ].join("\n");
  await Deno.writeTextFile(`${dir}/rsyslog.conf`, conf);
  let process: CapturedProcess | undefined;
  const start = async () => {
    const started = spawnCaptured(binary, [
      "-n",
      "-f",
      `${dir}/rsyslog.conf`,
      "-i",
      `${dir}/rsyslogd.pid`,
    ], { cwd: dir });
    process = started;
    await waitReady(started, {
      name: "rsyslogd",
      check: () => canConnect(port),
      description: `rsyslogd listening on 127.0.0.1:${port}`,
      timeoutMs: 20_000,
      details: () => Promise.resolve(`--- rsyslog.conf ---\n${conf}\n`),
    });
  };
  await start();
  const halt = async () => {
    const running = process;
    process = undefined;
    await running?.stop();
  };
  return {
    port,
    udpPort,
    async messages() {
      const text = await Deno.readTextFile(out).catch(() => "");
      return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    },
    get running() {
      return process !== undefined && process.exited() === undefined;
    },
    halt,
    start,
    async stop() {
      await halt();
      await removeDir(dir);
    },
    async [Symbol.asyncDispose]() {
      await halt();
      await removeDir(dir);
    },
  };
}
