/**
 * What an HTTP-family backend needs to be let in, read from its options when the configuration is
 * built: its credentials (`auth`) and its TLS identity (`ca_path`, `client_cert_path`,
 * `client_key_path`). A file that cannot be read is an error naming its key.
 */
import { X509Certificate } from "node:crypto";
import { resolve } from "node:path";
import { type Clock, systemClock } from "../../../shared/mod.ts";
import type { BackendConfig } from "../../../shared/gateway_config/mod.ts";
import { ClientCredentials, importSigningKey } from "./client_credentials.ts";
import { basicAuthorization, StaticCredentials, TokenFileCredentials } from "./static.ts";
import type { HeaderField, UpstreamCredentials } from "./types.ts";

/** TLS material of an upstream (PEM). */
export interface UpstreamTls {
  /** Trusted besides the system's roots. */
  caCerts?: string[];
  /** Presented to the upstream (mutual TLS). */
  clientCert?: { cert: string; key: string };
  /** Name the upstream's certificate is checked against, instead of the URL's host. */
  serverName?: string;
  /** When the client certificate stops being valid (ms since the epoch). */
  clientCertExpiresAt?: number;
}

/**
 * When the first certificate of `pem` expires; an error naming `key` when it cannot be read or
 * has already expired (the upstream would refuse every request).
 */
export function certificateExpiry(pem: string, key: string): number {
  let expires: number;
  try {
    expires = Date.parse(new X509Certificate(pem).validTo);
  } catch (err) {
    throw new Error(`${key}: not a PEM certificate: ${(err as Error).message}`);
  }
  if (!(expires > Date.now())) {
    throw new Error(`${key}: the certificate expired on ${new Date(expires).toISOString()}`);
  }
  return expires;
}

/** A backend's way in. */
export interface UpstreamAccess {
  credentials?: UpstreamCredentials;
  tls?: UpstreamTls;
}

async function readKey(
  baseDir: string,
  options: Record<string, unknown>,
  key: string,
  where: string,
) {
  const path = resolve(baseDir, String(options[key]));
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    throw new Error(`${where}.${key}: cannot read ${path}: ${(err as Error).message}`);
  }
}

/** The access of `config` (an `http`, `fhir`, `dicomweb` or `http3` backend); `clock` times its tokens. */
export async function loadUpstreamAccess(
  config: BackendConfig,
  baseDir: string,
  clock: Clock = systemClock,
): Promise<UpstreamAccess> {
  const o = config.options;
  const access: UpstreamAccess = {};
  if (
    o.ca_path !== undefined || o.client_cert_path !== undefined || o.server_name !== undefined
  ) {
    const tls: UpstreamTls = {};
    if (o.server_name !== undefined) tls.serverName = String(o.server_name);
    if (o.ca_path !== undefined) tls.caCerts = [await readKey(baseDir, o, "ca_path", "options")];
    if (o.client_cert_path !== undefined) {
      const cert = await readKey(baseDir, o, "client_cert_path", "options");
      tls.clientCert = { cert, key: await readKey(baseDir, o, "client_key_path", "options") };
      tls.clientCertExpiresAt = certificateExpiry(cert, "options.client_cert_path");
    }
    access.tls = tls;
  }
  const auth = o.auth as Record<string, unknown> | undefined;
  if (auth) access.credentials = await credentialsOf(config.name, auth, baseDir, access.tls, clock);
  return access;
}

async function credentialsOf(
  backend: string,
  auth: Record<string, unknown>,
  baseDir: string,
  tls: UpstreamTls | undefined,
  clock: Clock,
): Promise<UpstreamCredentials> {
  switch (auth.type) {
    case "bearer": {
      if (auth.token_file !== undefined) {
        const path = resolve(baseDir, String(auth.token_file));
        try {
          return await TokenFileCredentials.open(path, clock);
        } catch (err) {
          throw new Error(
            `options.auth.token_file: cannot read ${path}: ${(err as Error).message}`,
          );
        }
      }
      return new StaticCredentials([["authorization", `Bearer ${auth.token}`]]);
    }
    case "basic":
      return new StaticCredentials([
        basicAuthorization(String(auth.username), String(auth.password)),
      ]);
    case "headers":
      return new StaticCredentials(
        Object.entries(auth.headers as Record<string, string>).map(
          ([name, value]) => [name.toLowerCase(), value] as HeaderField,
        ),
      );
    default: {
      const method = (auth.client_auth as string | undefined) ?? "client_secret_basic";
      const alg = (auth.signing_alg as string | undefined) ?? "RS384";
      let signer;
      if (method === "private_key_jwt") {
        const text = await readKey(baseDir, auth, "private_key_path", "options.auth");
        try {
          const { key, kid } = await importSigningKey(text, alg);
          signer = { key, alg, kid: (auth.key_id as string | undefined) ?? kid };
        } catch (err) {
          throw new Error(
            `options.auth.private_key_path: not a ${alg} private key (PKCS#8 PEM or JWK): ` +
              (err as Error).message,
          );
        }
      }
      return new ClientCredentials({
        backend,
        token_url: String(auth.token_url),
        client_id: String(auth.client_id),
        client_auth: method as "client_secret_basic",
        client_secret: auth.client_secret as string | undefined,
        scopes: (auth.scopes as string[] | undefined) ?? [],
        audience: auth.audience as string | undefined,
        resource: auth.resource as string | undefined,
        timeout_secs: (auth.timeout_secs as number | undefined) ?? 10,
        signer,
        // The token endpoint is trusted like the upstream (a private CA) when one is set.
        client: tls?.caCerts ? Deno.createHttpClient({ caCerts: tls.caCerts }) : undefined,
        clock,
      });
    }
  }
}
