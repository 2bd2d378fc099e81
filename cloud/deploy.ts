/**
 * The cloud service on Deno Deploy (or under `deno serve`): a module whose default export
 * answers requests, over the platform's KV (`Deno.openKv()` without a path), with its settings
 * from environment variables. It writes no file, runs no subprocess and listens on no port of its
 * own: the platform does that. docs/deployment.md says how to deploy it.
 *
 * Environment: `CLOUD_BASE_URL` (required, the public https URL: the token issuer) and
 * `CLOUD_KEY_ENCRYPTION_KEY`, or `CLOUD_KEY_ENCRYPTION_KEY_FILE` naming a file that holds it
 * (required: the signing keys are sealed with it, so it must be the same at every start), and
 * optionally `CLOUD_SIGNUP`, `CLOUD_TRUST_PROXY`, `CLOUD_TOKEN_RATE`, `CLOUD_LOG_LEVEL` as for
 * `cloud serve`. It reads the deployment's own files: the web UI's htmx script from
 * `node_modules`, and the key file when one is named.
 *
 * @example
 * ```ts ignore
 * // deno task cloud:serve   (deno serve --host 127.0.0.1 ... cloud/deploy.ts; docs/deployment.md)
 * // (on Deno Deploy: entrypoint cloud/deploy.ts, the two variables set in the project)
 * ```
 *
 * @module
 */
import { createApp } from "./app.tsx";
import { isLoopbackHostname } from "./auth/mod.ts";
import { parseCommandLine, resolveOptions } from "./options.ts";
import { createServices } from "./services.ts";

/** Reads an environment variable. */
export type EnvReader = (name: string) => string | undefined;

/** The handler of the deployed service. */
export type DeployHandler = (
  request: Request,
  info?: Deno.ServeHandlerInfo<Deno.NetAddr>,
) => Promise<Response>;

/**
 * Builds the service from `env` over `kv` (the platform's own when not given): resolves once the
 * signing keys are ready; throws with a message naming what is missing.
 */
export async function createDeployHandler(
  env: EnvReader = (name) => Deno.env.get(name),
  kv?: Deno.Kv,
): Promise<DeployHandler> {
  const parsed = parseCommandLine([], env).options;
  if (!parsed.baseUrl) {
    throw new Error("CLOUD_BASE_URL is required: the service's public URL (the token issuer)");
  }
  if (!parsed.keyEncryptionKey && !parsed.keyEncryptionKeyFile) {
    throw new Error(
      "CLOUD_KEY_ENCRYPTION_KEY is required on Deno Deploy (openssl rand -base64 32), or " +
        "CLOUD_KEY_ENCRYPTION_KEY_FILE naming a file that holds it (deno serve): there is no " +
        "data directory for a generated one, and the key must be the same at every start",
    );
  }
  const options = resolveOptions({ ...parsed, kvUrl: undefined, managedKv: true });
  const store = kv ?? await Deno.openKv();
  // Deploy ends an isolate without notice: nothing waits on this signal but long polls.
  const services = await createServices(options, store, new AbortController().signal);
  const { app } = createApp(services);
  return async (request, info) =>
    await app.fetch(request, info ? { remoteAddr: info.remoteAddr } : {});
}

let ready: Promise<DeployHandler> | undefined;

/**
 * What `deno serve` bound, and a warning when a development service (a loopback base URL) listens
 * on every address: `deno serve` binds 0.0.0.0 unless `--host` says otherwise.
 */
export function listenMessage(addr: Deno.Addr, baseUrl: string | undefined): string[] {
  if (addr.transport !== "tcp" && addr.transport !== "udp") return [];
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const lines = [`cloud (deploy entry) listening on http://${host}:${addr.port}/`];
  let base: URL | undefined;
  try {
    base = baseUrl ? new URL(baseUrl) : undefined;
  } catch {
    base = undefined;
  }
  if (base && isLoopbackHostname(base.hostname) && !isLoopbackHostname(addr.hostname)) {
    lines.push(
      `warning: CLOUD_BASE_URL ${base.origin} is a loopback address (development), but the ` +
        `service listens on ${addr.hostname}: add --host 127.0.0.1 to deno serve`,
    );
  }
  return lines;
}

/** The `deno serve` / Deno Deploy entry: builds the service on the first request. */
export default {
  onListen(addr: Deno.Addr): void {
    let baseUrl: string | undefined;
    try {
      baseUrl = Deno.env.get("CLOUD_BASE_URL");
    } catch {
      // Without --allow-env the first request answers 503 naming the problem; no warning here.
    }
    for (const line of listenMessage(addr, baseUrl)) console.error(line);
  },
  async fetch(request: Request, info: Deno.ServeHandlerInfo): Promise<Response> {
    ready ??= createDeployHandler();
    let handler: DeployHandler;
    try {
      handler = await ready;
    } catch (err) {
      ready = undefined;
      console.error(`cloud: cannot start: ${(err as Error).message}`);
      return Response.json(
        { error: { code: "not_configured", message: (err as Error).message } },
        { status: 503 },
      );
    }
    return await handler(request, info as Deno.ServeHandlerInfo<Deno.NetAddr>);
  },
} satisfies Deno.ServeDefaultExport;
