/**
 * The cloud service: accounts and teams, device login, tokens, gateway authorization and
 * configuration sync, team-scoped resources, the web UI. Start it with {@link startCloud}.
 *
 * @example
 * ```ts
 * import { startCloud } from "./mod.ts";
 *
 * // The control plane on a free loopback port, its data in a temporary directory.
 * const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
 * const port = (probe.addr as Deno.NetAddr).port;
 * probe.close();
 * const dataDir = await Deno.makeTempDir();
 * const cloud = await startCloud({ hostname: "127.0.0.1", port, dataDir, kvUrl: ":memory:" });
 * const jwks = await (await fetch(`${cloud.url}/.well-known/jwks.json`)).json();
 * console.log(jwks.keys.length > 0); // true: the signing keys that tokens are verified with
 * await cloud.stop();
 * await Deno.remove(dataDir, { recursive: true });
 * ```
 *
 * @module
 */
export { type CloudServer, startCloud } from "./server.ts";
export { type CloudApp, createApp } from "./app.tsx";
export { type Clock, iso, ManualClock, systemClock } from "./clock.ts";
export {
  type CloudOptions,
  type CloudOptionsInput,
  defaultHostname,
  normalizeBaseUrl,
  OWASP_PBKDF2_ITERATIONS,
  parseCommandLine,
  type ParsedCommandLine,
  resolveOptions,
  USAGE,
} from "./options.ts";
export { createServices, type Services } from "./services.ts";
export { createUser } from "./users.ts";
