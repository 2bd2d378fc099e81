/**
 * The connection of a `nats` queue to its servers: URLs, credentials (user and password, token,
 * a `.creds` file or an NKey seed file) and TLS (a CA bundle, a client certificate), from the
 * queue's `nats_*` keys. Secrets are read here and handed to the client, never logged.
 */
import {
  connect,
  type ConnectionOptions,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
} from "nats";
import type { QueueConfig } from "../../../shared/gateway_config/mod.ts";
import { QUEUE_NATS_DEFAULTS } from "../../../shared/gateway_config/mod.ts";

/** Largest credentials file read. */
const MAX_CREDENTIALS_FILE = 64 * 1024;

async function readSmall(path: string, what: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (err) {
    throw new Error(`the NATS ${what} ${path} cannot be read: ${(err as Error).message}`);
  }
  if (bytes.length > MAX_CREDENTIALS_FILE) {
    throw new Error(`the NATS ${what} ${path} is over ${MAX_CREDENTIALS_FILE} bytes`);
  }
  return bytes;
}

/** The client's options for `config` (files read now). */
export async function connectionOptions(
  config: QueueConfig,
  name: string,
): Promise<ConnectionOptions> {
  const timeout = (config.nats_timeout_secs ?? QUEUE_NATS_DEFAULTS.nats_timeout_secs) * 1000;
  const urls = config.nats_servers ?? [];
  const tlsScheme = urls.some((u) => u.startsWith("tls://"));
  const opts: ConnectionOptions = {
    // The client takes host:port; TLS is asked for through `tls` below.
    servers: urls.map((u) => {
      const url = new URL(u);
      return `${url.hostname.includes(":") ? `[${url.hostname}]` : url.hostname}:${
        url.port || "4222"
      }`;
    }),
    name,
    timeout,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 250,
    pingInterval: 5_000,
    maxPingOut: 2,
  };
  if (config.nats_user !== undefined) {
    opts.user = config.nats_user;
    opts.pass = config.nats_password;
  }
  if (config.nats_token !== undefined) opts.token = config.nats_token;
  if (config.nats_creds_file !== undefined) {
    opts.authenticator = credsAuthenticator(
      await readSmall(config.nats_creds_file, "credentials file"),
    );
  }
  if (config.nats_nkey_file !== undefined) {
    const text = new TextDecoder().decode(await readSmall(config.nats_nkey_file, "NKey file"));
    const seed = text.split(/\s+/).find((w) => /^SU[A-Z2-7]{40,}$/.test(w));
    if (!seed) {
      throw new Error(`the NATS NKey file ${config.nats_nkey_file} holds no user seed (SU…)`);
    }
    opts.authenticator = nkeyAuthenticator(new TextEncoder().encode(seed));
  }
  if (tlsScheme || config.nats_ca_path !== undefined || config.nats_cert_path !== undefined) {
    opts.tls = {
      ...(config.nats_ca_path !== undefined
        ? { ca: new TextDecoder().decode(await readSmall(config.nats_ca_path, "CA bundle")) }
        : {}),
      ...(config.nats_cert_path !== undefined
        ? {
          cert: new TextDecoder().decode(await readSmall(config.nats_cert_path, "certificate")),
          key: new TextDecoder().decode(await readSmall(config.nats_key_path!, "private key")),
        }
        : {}),
    };
  }
  return opts;
}

let socketErrorsGuarded = false;

/** Socket errors of a connection the `nats` client has already let go of. */
const LATE_SOCKET_ERRORS = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

/**
 * The `nats` client's Node transport removes its socket's listeners before it destroys the
 * socket (a refused login, a closed connection); a reset that the runtime reports after that, and
 * a TLS alert that a server refusing this client's certificate sends once the client's side of the
 * handshake is done (TLS 1.3), reach a socket with no `error` listener, and would end the process.
 * This guard stops exactly those errors (raised by the socket layer: a TLS alert, or a reset, broken
 * pipe or abort on a stream's read) from doing so; the connection attempt fails by itself or by its
 * timeout and the queue stays degraded, saying why. Any other uncaught error still ends the process.
 */
function guardSocketErrors(onAlert: (message: string) => void): void {
  if (socketErrorsGuarded) return;
  socketErrorsGuarded = true;
  globalThis.addEventListener("error", (event) => {
    const err = (event as ErrorEvent).error as (Error & { code?: string }) | undefined;
    const message = err?.message ?? "";
    const stack = err?.stack ?? "";
    const tlsAlert = /tls_wrap|_tls_|TLSSocket/.test(stack) && /alert|certificate/i.test(message);
    const lateReset = LATE_SOCKET_ERRORS.has(err?.code ?? "") &&
      /onStreamRead|stream_base_commons|afterWriteDispatched/.test(stack);
    if (!tlsAlert && !lateReset) return;
    event.preventDefault();
    if (tlsAlert) onAlert(message);
  });
}

/** The last TLS alert a NATS server sent (why a TLS connection failed). */
let lastAlert: string | undefined;

/** Connects to the servers of `config` (fails when none answers within `nats_timeout_secs`). */
export async function connectQueue(config: QueueConfig, name: string): Promise<NatsConnection> {
  const options = await connectionOptions(config, name);
  guardSocketErrors((message) => lastAlert = message);
  try {
    return await connect(options);
  } catch (err) {
    if (options.tls && lastAlert) {
      throw new Error(`${(err as Error)?.message ?? err} (the server's TLS alert: ${lastAlert})`);
    }
    throw err;
  }
}

/**
 * What identifies the connection of `config`: a reload that keeps it keeps the running queue
 * (secrets enter only as a digest).
 */
export async function connectionKey(config: QueueConfig): Promise<string> {
  const parts = Object.entries(config)
    .filter(([k]) => k.startsWith("nats_") && k !== "nats_ack_wait_secs")
    .sort(([a], [b]) => a.localeCompare(b));
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(JSON.stringify(parts)),
  );
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
