/** Running the service: open KV, build the app, serve it with Deno.serve, stop cleanly. */
import { iso } from "./clock.ts";
import { createApp } from "./app.tsx";
import type { Hono } from "hono";
import type { AppEnv, Registry } from "./api/mod.ts";
import { type CloudOptionsInput, defaultHostname, resolveOptions } from "./options.ts";
import { createServices, type Services } from "./services.ts";
import { openKv } from "./store/mod.ts";
import { DEFAULT_GUARD, guardedServe } from "../shared/net/mod.ts";

/** A running service. */
export interface CloudServer {
  /** The public base URL (the token issuer). */
  url: string;
  /** The port it listens on. */
  port: number;
  services: Services;
  app: Hono<AppEnv>;
  registry: Registry;
  /**
   * Ends long polls, stops listening, waits for requests in flight (at most `graceMs`, then
   * closes what is left; default: as long as they take), closes KV.
   */
  stop(graceMs?: number): Promise<void>;
}

/** Starts the service. With port 0 and no base URL, the base URL uses the port that was bound. */
export async function startCloud(input: CloudOptionsInput = {}): Promise<CloudServer> {
  // Development mode (a loopback or no base URL) binds the loopback address unless told otherwise.
  const hostname = input.hostname ?? defaultHostname(input.baseUrl);
  let handler:
    | ((req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>) => Response | Promise<Response>)
    | undefined;
  // Behind the slow-client guard (shared/net): header and idle timeouts, a per-address cap.
  const server = guardedServe(
    {
      port: input.port ?? 8000,
      hostname,
      guard: DEFAULT_GUARD,
    },
    (req, info) =>
      handler ? handler(req, info) : new Response(
        JSON.stringify({ error: { code: "starting", message: "the service is starting" } }),
        {
          status: 503,
          headers: { "content-type": "application/json", "retry-after": "1" },
        },
      ),
  );
  const port = server.addr.port;
  const shutdown = new AbortController();
  let kv: Deno.Kv | undefined;
  try {
    const options = resolveOptions({
      ...input,
      port,
      hostname,
      baseUrl: input.baseUrl ?? `http://${defaultBaseHost(hostname)}:${port}`,
    });
    kv = await openKv(options);
    const services = await createServices(options, kv, shutdown.signal);
    const { app, registry } = createApp(services);
    handler = (req, info) => app.fetch(req, info);
    options.logger.info("cloud service listening", {
      base_url: options.baseUrl,
      port,
      kv: options.kvUrl ? "remote" : `${options.dataDir}/cloud.sqlite`,
      started_at: iso(options.clock.now()),
    });
    const openKvHandle = kv;
    return {
      url: options.baseUrl,
      port,
      services,
      app,
      registry,
      stop: async (graceMs?: number) => {
        shutdown.abort();
        await server.shutdown(graceMs);
        openKvHandle.close();
      },
    };
  } catch (err) {
    shutdown.abort();
    await server.shutdown();
    kv?.close();
    throw err;
  }
}

/**
 * The host of the default base URL. A wildcard or loopback bind is `localhost`, the spelling the
 * docs and the gateway examples use (`[cloud] url = "http://localhost:8000"`), so the token issuer
 * matches them whichever loopback address the service was bound to.
 */
export function defaultBaseHost(hostname: string): string {
  if (LOCAL_BINDS.has(hostname.toLowerCase()) || hostname.startsWith("127.")) return "localhost";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

const LOCAL_BINDS = new Set(["0.0.0.0", "::", "[::]", "::1", "[::1]", "localhost"]);
