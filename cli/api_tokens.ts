/**
 * The cloud's API tokens through its REST API (`/api/tokens`), for scripts and CI that cannot do
 * the browser login: created with the user token of `gwcli login` (an API token cannot create
 * another), listed and revoked with it or with an API token.
 */
import { type CloudCredential, credentialRefused } from "./cloud_credential.ts";
import { CliError } from "./errors.ts";
import { apiErrorOf, describeApiError, type HttpClient, type HttpResponse } from "./http.ts";

/** An API token as the cloud lists it (never its text). */
export interface ApiTokenView {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

function failure(what: string, res: HttpResponse, credential: CloudCredential): CliError {
  const error = apiErrorOf(res);
  if (res.status === 401) return credentialRefused(credential, describeApiError(error));
  return new CliError(`${what} failed (${res.status}): ${describeApiError(error)}`);
}

/** Creates a token named `name`; the answer holds its text, shown once. */
export async function createApiToken(
  http: HttpClient,
  credential: CloudCredential,
  name: string,
  expiresInDays: number | null,
): Promise<ApiTokenView & { token: string }> {
  const res = await http.send({
    method: "POST",
    url: `${credential.apiUrl}/api/tokens`,
    headers: { authorization: `Bearer ${credential.token}` },
    json: { name, expires_in_days: expiresInDays },
    peer: "the cloud service",
  });
  if (res.status !== 201) throw failure("creating the API token", res, credential);
  return res.body as ApiTokenView & { token: string };
}

/** The team's tokens the user may see (owners: all). */
export async function listApiTokens(
  http: HttpClient,
  credential: CloudCredential,
): Promise<ApiTokenView[]> {
  const res = await http.send({
    method: "GET",
    url: `${credential.apiUrl}/api/tokens`,
    headers: { authorization: `Bearer ${credential.token}` },
    peer: "the cloud service",
  });
  if (res.status !== 200) throw failure("listing the API tokens", res, credential);
  return ((res.body as { items?: ApiTokenView[] }).items ?? []);
}

/** Revokes token `id`. */
export async function revokeApiToken(
  http: HttpClient,
  credential: CloudCredential,
  id: string,
): Promise<ApiTokenView> {
  const res = await http.send({
    method: "DELETE",
    url: `${credential.apiUrl}/api/tokens/${encodeURIComponent(id)}`,
    headers: { authorization: `Bearer ${credential.token}` },
    peer: "the cloud service",
  });
  if (res.status === 404) throw new CliError(`no API token ${id} in your team`);
  if (res.status !== 200) throw failure("revoking the API token", res, credential);
  return res.body as ApiTokenView;
}
