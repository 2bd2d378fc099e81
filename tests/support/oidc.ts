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
  tokenUrl: string;
  /** Client-credentials access tokens issued so far. */
  readonly issued: number;
  /** An access token of client `lab` for `scope` (space-separated). */
  token(scope: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a provider whose tokens are for `audience` and may carry `scopes`. */
export async function startOidcProvider(
  options: {
    audience: string;
    scopes: string[];
    claims?: Record<string, unknown>;
    /** More clients (e.g. `client_secret_post` or `private_key_jwt` ones). */
    clients?: Record<string, unknown>[];
    /** Lifetime of client-credentials access tokens, in seconds (default: the provider's). */
    tokenTtlSeconds?: number;
  },
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
    }, ...(options.clients ?? [])],
    ...(options.tokenTtlSeconds ? { ttl: { ClientCredentials: options.tokenTtlSeconds } } : {}),
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
    // SMART Backend Services clients sign their assertions with RS384 or ES384.
    enabledJWA: {
      clientAuthSigningAlgValues: ["RS256", "RS384", "PS256", "ES256", "ES384", "EdDSA"],
    },
    // Launch context and the like (a SMART server's `patient`) go into every access token.
    extraTokenClaims: () => options.claims ?? {},
  });
  // Its start-up notices (development adapter, runtime) are not the tests' business.
  const warn = console.warn;
  console.warn = () => {};
  const server = provider.listen(port, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  let issued = 0;
  // Opaque tokens are "saved", JWT ones "issued".
  provider.on("client_credentials.saved", () => issued++);
  provider.on("client_credentials.issued", () => issued++);
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    tokenUrl: `${issuer}/token`,
    get issued() {
      return issued;
    },
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
