/**
 * Who a request was authenticated as, written into its metadata for the middleware, backends
 * (`match` tables) and the access log that follow: `auth.method`, `auth.subject`, and where the
 * credential says so `auth.client_id` and `auth.scopes` (space-separated).
 */
import type { RequestEnvelope } from "../../envelope.ts";

/** Metadata keys of the authenticated identity. */
export const AUTH_METADATA = {
  method: "auth.method",
  subject: "auth.subject",
  clientId: "auth.client_id",
  scopes: "auth.scopes",
} as const;

/** An authenticated caller. */
export interface Identity {
  /** The middleware type that authenticated it (`api_key`, `basic_auth`, `jwt_auth`). */
  method: string;
  subject: string;
  clientId?: string;
  scopes?: readonly string[];
}

/**
 * Records `identity` on the request. Metadata a client could have sent under these keys is
 * replaced, never merged: only an authentication middleware writes them.
 */
export function setIdentity(req: RequestEnvelope, identity: Identity): void {
  const m = req.metadata;
  m[AUTH_METADATA.method] = identity.method;
  m[AUTH_METADATA.subject] = identity.subject;
  if (identity.clientId !== undefined) m[AUTH_METADATA.clientId] = identity.clientId;
  else delete m[AUTH_METADATA.clientId];
  if (identity.scopes !== undefined) m[AUTH_METADATA.scopes] = identity.scopes.join(" ");
  else delete m[AUTH_METADATA.scopes];
}
