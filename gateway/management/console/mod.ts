/**
 * The operations console: server-rendered pages served by the management listener at
 * `/{prefix}/console` (docs/operations.md): a dashboard per pipeline, message tracking's browser,
 * dead letters, a live tail of requests and a health page. Same standards as the cloud's web UI:
 * Hono JSX, htmx from this origin, a content security policy without inline script, every page
 * usable without script and by keyboard. Signed in with the management token (a session cookie,
 * HttpOnly, SameSite=Strict); CSRF tokens on every form.
 *
 * @example
 * ```ts
 * import { certificateSettings, consolePath, matches } from "./mod.ts";
 *
 * console.log(consolePath("admin")); // /admin/console
 * // The settings of a configuration that name certificate files (the health page reads them).
 * console.log(certificateSettings({ network: { main: { tls_cert_path: "certs/a.pem" } } }));
 * // [ [ "network.main.tls_cert_path", "certs/a.pem" ] ]
 * const event = {
 *   at: "2026-01-01T00:00:00.000Z",
 *   request_id: "r1",
 *   pipeline: "fhir",
 *   status: 503,
 *   duration_ms: 3.2,
 *   fields: {},
 *   worker: 0,
 * };
 * console.log(matches(event, { pipeline: "fhir", status: "5xx" })); // true
 * ```
 *
 * @module
 */
export { type ConsoleHandler, type ConsoleOptions, consolePath, createConsole } from "./app.tsx";
export {
  type CertificateInfo,
  certificateSettings,
  configuredCertificates,
} from "./certificates.ts";
export type { ConsoleAccess } from "./session.ts";
export { matches, type TailFilter } from "./tail.tsx";
