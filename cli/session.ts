/** The logged-in user: the stored token, verified against the configured cloud. */
import type { CliContext } from "./context.ts";
import { authError } from "./errors.ts";
import type { StoredCredentials } from "./secure_store.ts";
import { type VerifiedUserToken, verifyUserToken } from "./user_token.ts";

/** A verified login. */
export interface Session {
  apiUrl: string;
  token: string;
  credentials: StoredCredentials;
  verified: VerifiedUserToken;
  /** Where the token is stored. */
  location: string;
}

/** Loads and verifies the stored token; not logged in or invalid is an auth error (exit 3). */
export async function requireSession(ctx: CliContext): Promise<Session> {
  const { value: apiUrl } = await ctx.apiUrl();
  const loaded = await ctx.store(apiUrl).load();
  if (!loaded) throw authError("not logged in: no user token is stored");
  const { credentials, location } = loaded;
  ctx.out.debug(1, `user token read from the ${location}`);
  if (credentials.api_url !== apiUrl) {
    throw authError(
      `the stored token is from ${credentials.api_url}, but api-url is now ${apiUrl}`,
    );
  }
  const verified = await verifyUserToken(
    ctx.http,
    apiUrl,
    credentials.access_token,
    new Date(ctx.now()),
  );
  return { apiUrl, token: credentials.access_token, credentials, verified, location };
}
