/** Calls of the cloud's API with a user or API token: `POST /api/gateway/authorize`. */
import { checkMachineTokenPayload, type MachineTokenPayload } from "../shared/mod.ts";
import { type CloudCredential, credentialRefused } from "./cloud_credential.ts";
import { CliError, EXIT } from "./errors.ts";
import { apiErrorOf, describeApiError, type HttpClient } from "./http.ts";

/** A machine-token payload and whether the cloud created the gateway for it. */
export interface AuthorizedGateway {
  payload: MachineTokenPayload;
  /** True when no gateway had this code in the team (201). */
  created: boolean;
}

/**
 * Exchanges the user or API token and a gateway code for a machine token (SPEC "Machine token
 * payload"); the cloud creates the gateway when missing.
 */
export async function authorizeGateway(
  http: HttpClient,
  credential: CloudCredential,
  gatewayCode: string,
): Promise<AuthorizedGateway> {
  const res = await http.send({
    method: "POST",
    url: `${credential.apiUrl}/api/gateway/authorize`,
    headers: { authorization: `Bearer ${credential.token}` },
    json: { gateway_code: gatewayCode },
    peer: "the cloud service",
  });
  if (res.status === 200 || res.status === 201) {
    const check = checkMachineTokenPayload(res.body);
    if (!check.ok) {
      throw new CliError(
        `the cloud service answered a malformed machine token: ${check.problems.join("; ")}`,
      );
    }
    return { payload: check.payload, created: res.status === 201 };
  }
  const error = apiErrorOf(res);
  if (res.status === 401) throw credentialRefused(credential, describeApiError(error));
  if (res.status === 422) {
    throw new CliError(
      `the cloud service refused gateway code '${gatewayCode}': ${error.message}`,
      {
        exitCode: EXIT.usage,
      },
    );
  }
  throw new CliError(
    `the cloud service did not authorize gateway '${gatewayCode}' (${res.status}): ` +
      describeApiError(error),
  );
}
