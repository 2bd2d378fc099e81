/**
 * The cloud's discovery metadata (`/.well-known/openid-configuration`): the issuer, the JWKS and
 * the device-flow endpoints. The issuer is pinned: it must be the configured `api-url` itself
 * (RFC 8414 §3.3), so a token from another issuer never verifies.
 */
import { CliError } from "./errors.ts";
import { apiErrorOf, describeApiError, type HttpClient } from "./http.ts";

/** The metadata gwcli uses. */
export interface CloudMetadata {
  issuer: string;
  jwks_uri: string;
  device_authorization_endpoint: string;
  token_endpoint: string;
}

/** Fetches and checks the metadata of the cloud at `apiUrl`. */
export async function fetchMetadata(http: HttpClient, apiUrl: string): Promise<CloudMetadata> {
  const url = `${apiUrl}/.well-known/openid-configuration`;
  const res = await http.send({ method: "GET", url, peer: "the cloud service" });
  if (res.status !== 200) {
    throw new CliError(
      `the cloud service at ${apiUrl} has no discovery metadata (${res.status}): ` +
        describeApiError(apiErrorOf(res)),
      { hint: "Check api-url: gwcli config:get api-url" },
    );
  }
  const m = res.body as Record<string, unknown> | undefined;
  const fields = ["issuer", "jwks_uri", "device_authorization_endpoint", "token_endpoint"];
  for (const field of fields) {
    if (typeof m?.[field] !== "string") {
      throw new CliError(`the discovery metadata of ${apiUrl} lacks ${field}`);
    }
  }
  const metadata = m as unknown as CloudMetadata;
  if (metadata.issuer.replace(/\/+$/, "") !== apiUrl) {
    throw new CliError(
      `the cloud service at ${apiUrl} says its issuer is ${metadata.issuer}: ` +
        "tokens are only accepted from the configured api-url",
      { hint: `If that is the right service, run: gwcli config:set api-url ${metadata.issuer}` },
    );
  }
  return metadata;
}
