/**
 * Outbound credentials and TLS identity of the HTTP-family backends (`[backends.<name>.options]`
 * `auth`, `ca_path`, `client_cert_path`, `client_key_path`; docs/security.md).
 *
 * @example
 * ```ts
 * import { basicAuthorization, StaticCredentials } from "./mod.ts";
 *
 * const archive = new StaticCredentials([basicAuthorization("gateway", "s3cret")]);
 * console.log(archive.fields()); // [ [ "authorization", "Basic Z2F0ZXdheTpzM2NyZXQ=" ] ]
 * console.log(archive.rejected()); // false: asking again would not help
 * ```
 *
 * @module
 */
export { loadUpstreamAccess, type UpstreamAccess, type UpstreamTls } from "./access.ts";
export {
  ClientCredentials,
  type ClientCredentialsOptions,
  importSigningKey,
} from "./client_credentials.ts";
export { sendWithCredentials } from "./resend.ts";
export { basicAuthorization, StaticCredentials, TokenFileCredentials } from "./static.ts";
export type { HeaderField, UpstreamCredentials } from "./types.ts";
