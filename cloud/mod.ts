/**
 * The cloud service: accounts and teams, device login, tokens, gateway authorization and
 * configuration sync, team-scoped resources, the web UI. Start it with {@link startCloud}.
 *
 * @module
 */
export { type CloudServer, startCloud } from "./server.ts";
export { type CloudApp, createApp } from "./app.tsx";
export { type Clock, iso, ManualClock, systemClock } from "./clock.ts";
export {
  type CloudOptions,
  type CloudOptionsInput,
  normalizeBaseUrl,
  OWASP_PBKDF2_ITERATIONS,
  parseCommandLine,
  type ParsedCommandLine,
  resolveOptions,
  USAGE,
} from "./options.ts";
export { createServices, type Services } from "./services.ts";
export { createUser } from "./users.ts";
