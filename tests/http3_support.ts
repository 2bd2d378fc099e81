/**
 * Helpers of the HTTP/3 tests: a certificate a QUIC client accepts (rustls refuses a self-signed
 * certificate marked CA:TRUE as a server certificate, so this one is a CA:FALSE leaf) with its
 * SPKI hash for Chromium, and a raw QUIC peer that can send anything.
 */
import type { GatewayConfig } from "../shared/gateway_config/types.ts";
import { silentLogger } from "../shared/log.ts";
import { Body, RequestEnvelope } from "../gateway/envelope.ts";
import { encodeFrame, FRAME, STREAM_TYPE } from "../gateway/http3/frames.ts";
import { encodeSettings } from "../gateway/http3/settings.ts";

/** A certificate for localhost and 127.0.0.1, its key, and its SPKI SHA-256 (base64). */
export interface H3Cert {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
  spkiHash: string;
}

async function openssl(args: string[], stdin?: Uint8Array): Promise<Uint8Array> {
  const child = new Deno.Command("openssl", {
    args,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  if (!out.success) throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
  return out.stdout;
}

/** Make an ECDSA P-256 leaf certificate (CA:FALSE, serverAuth) valid for a day in `dir`. */
export async function makeH3Cert(dir: string, name = "h3"): Promise<H3Cert> {
  const certPath = `${dir}/${name}.crt`;
  const keyPath = `${dir}/${name}.key`;
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    keyPath,
    "-out",
    certPath,
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-addext",
    "basicConstraints=critical,CA:FALSE",
    "-addext",
    "extendedKeyUsage=serverAuth",
  ]);
  const pub = await openssl(["x509", "-in", certPath, "-pubkey", "-noout"]);
  const der = await openssl(["pkey", "-pubin", "-outform", "der"], pub);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", der as BufferSource));
  return {
    certPath,
    keyPath,
    cert: await Deno.readTextFile(certPath),
    key: await Deno.readTextFile(keyPath),
    spkiHash: btoa(String.fromCharCode(...digest)),
  };
}

/** A QUIC connection speaking raw bytes, for peers that misbehave on purpose. */
export interface RawPeer {
  conn: Deno.QuicConn;
  /** Open a unidirectional stream and write bytes (the stream stays open). */
  uni(bytes: Uint8Array, finish?: boolean): Promise<WritableStreamDefaultWriter<Uint8Array>>;
  /** Open our control stream with an empty SETTINGS frame. */
  control(): Promise<WritableStreamDefaultWriter<Uint8Array>>;
  /** Resolves with the close code the server used. */
  closeCode(): Promise<number>;
}

/** Connect to an HTTP/3 server with ALPN h3 without speaking HTTP/3 yet. */
export async function rawPeer(port: number, cert: string): Promise<RawPeer> {
  const conn = await Deno.connectQuic({
    hostname: "127.0.0.1",
    port,
    serverName: "localhost",
    caCerts: [cert],
    alpnProtocols: ["h3"],
  });
  const uni = async (bytes: Uint8Array, finish = false) => {
    const s = await conn.createUnidirectionalStream();
    const w = s.getWriter();
    await w.write(bytes);
    if (finish) await w.close();
    return w;
  };
  return {
    conn,
    uni,
    control: () => {
      const settings = encodeSettings({
        qpackMaxTableCapacity: 0,
        qpackBlockedStreams: 0,
        maxFieldSectionSize: Infinity,
      });
      return uni(Uint8Array.of(STREAM_TYPE.CONTROL, ...settings));
    },
    closeCode: () => conn.closed.then((i) => i.closeCode, () => -1),
  };
}

/** A frame from type and payload bytes. */
export function frame(type: number, payload: number[] | Uint8Array): Uint8Array {
  return encodeFrame(type, payload instanceof Uint8Array ? payload : Uint8Array.from(payload));
}

export { FRAME, STREAM_TYPE };

/** A free UDP port on loopback (bound to 0, read, closed). */
export function freeUdpPort(): number {
  const sock = Deno.listenDatagram({ hostname: "127.0.0.1", port: 0, transport: "udp" });
  const port = (sock.addr as Deno.NetAddr).port;
  sock.close();
  return port;
}

/** A port free for both TCP and UDP on loopback (Caddy and our listeners use both). */
export function freeDualPort(): number {
  for (let i = 0; i < 20; i++) {
    const port = freeUdpPort();
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch {
      // taken over TCP: try another
    }
  }
  throw new Error("no port free for both TCP and UDP");
}

/** Hex SHA-256 of bytes. */
export async function sha256(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The config of an `http3` backend named `caddy` (defaults as the loader applies them). */
export function backendConfig(port: number, caPath?: string, extra: Record<string, unknown> = {}) {
  return {
    name: "caddy",
    service: "http3" as const,
    options: { host: "localhost", port, base_path: "/base", ca_cert_path: caPath, ...extra },
    targets: [],
    required: false,
    timeout_secs: 30,
    retries: 1,
    load_balancing: "round_robin" as const,
    max_failures: 3,
    cooldown_secs: 10,
  };
}

/** A build context for backends built outside a gateway. */
export function buildContext() {
  return {
    config: { targets: {} } as unknown as GatewayConfig,
    logger: silentLogger,
    baseDir: Deno.cwd(),
  };
}

/** A GET request envelope for `path`. */
export function envelope(path: string, method = "GET", body?: Uint8Array): RequestEnvelope {
  return new RequestEnvelope({
    id: crypto.randomUUID(),
    protocol: "http",
    method,
    path,
    endpoint: "test",
    body: body ? new Body(body, "application/octet-stream") : undefined,
  });
}

/** A backend call context whose signal times out after `ms`. */
export function call(ms = 10_000) {
  return { signal: AbortSignal.timeout(ms), logger: silentLogger };
}
