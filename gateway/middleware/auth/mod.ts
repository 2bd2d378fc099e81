/**
 * Authentication middleware: `api_key`, `basic_auth` and `jwt_auth`. Each sets the request's `auth.*`
 * metadata (identity.ts) on success and answers 401 with a `WWW-Authenticate` challenge otherwise;
 * credentials are never logged nor repeated in answers, and are removed before the backend unless
 * `forward_credentials` is set. `basic_auth` hashes passwords in the isolate's password workers
 * (password_pool.ts), never on a thread that serves requests, within a budget per client address.
 *
 * @example
 * ```ts
 * import { parseHtpasswd } from "./mod.ts";
 *
 * // Weak hashes are refused when the file is loaded, naming the line.
 * try {
 *   parseHtpasswd("ada:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n", "users.htpasswd");
 * } catch (err) {
 *   console.log((err as Error).message); // users.htpasswd:1: user ada: SHA-1 hashes ({SHA}) are not accepted; …
 * }
 * ```
 *
 * @module
 */
export { ApiKeyMiddleware, createApiKeyMiddleware } from "./api_key.ts";
export { BasicAuthMiddleware, createBasicAuthMiddleware } from "./basic_auth.ts";
export { createJwtAuthMiddleware, JwtAuthMiddleware, scopesOf } from "./jwt_auth.ts";
export { AUTH_METADATA, type Identity, setIdentity } from "./identity.ts";
export { parseHtpasswd } from "./htpasswd.ts";
export { sha256Hex } from "./credentials.ts";
