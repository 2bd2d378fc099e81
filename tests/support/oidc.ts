/**
 * An OAuth 2.0 / OpenID Connect server nobody here wrote, for the bearer-token tests: the npm
 * package `oidc-provider`, in this process on a free loopback port, issuing JWT access tokens
 * (client credentials grant, RFC 9068 profile) for one resource and serving its JWKS.
 */
import Provider from "oidc-provider";
import { exportJWK, generateKeyPair } from "jose";
import { freePort } from "./ports.ts";

/** A running provider. */
export interface OidcProvider {
  issuer: string;
  jwksUrl: string;
  /** An access token of client `lab` for `scope` (space-separated). */
  token(scope: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a provider whose tokens are for `audience` and may carry `scopes`. */
export async function startOidcProvider(
  options: { audience: string; scopes: string[]; claims?: Record<string, unknown> },
): Promise<OidcProvider> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const key = { ...(await exportJWK(privateKey)), kid: "provider-1", alg: "RS256", use: "sig" };
  const port = freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: "lab",
      client_secret: "lab-secret",
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
    }],
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.audience,
        getResourceServerInfo: () => ({
          scope: options.scopes.join(" "),
          audience: options.audience,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
        useGrantedResource: () => true,
      },
    },
    jwks: { keys: [key] },
    // Launch context and the like (a SMART server's `patient`) go into every access token.
    extraTokenClaims: () => options.claims ?? {},
  });
  // Its start-up notices (development adapter, runtime) are not the tests' business.
  const warn = console.warn;
  console.warn = () => {};
  const server = provider.listen(port, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    async token(scope: string) {
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${btoa("lab:lab-secret")}`,
        },
        body: new URLSearchParams({ grant_type: "client_credentials", scope }),
      });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token as string;
    },
    stop() {
      console.warn = warn;
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
