/**
 * The device authorization grant (RFC 8628) from the device side: ask for a device code, then poll
 * the token endpoint every `interval` seconds (5 unless the cloud says otherwise), adding 5 s on
 * `slow_down`, until the user approves or denies in the browser or the code expires.
 */
import { CliError, EXIT } from "./errors.ts";
import { apiErrorOf, describeApiError, type HttpClient } from "./http.ts";
import type { CloudMetadata } from "./discovery.ts";

/** OAuth client id of gwcli. */
export const CLIENT_ID = "gwcli";
/** Grant type of the token requests. */
export const DEVICE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";
/** Polling interval when the cloud names none (SPEC Limits, RFC 8628 §3.2). */
export const DEFAULT_INTERVAL_SECONDS = 5;
/** What RFC 8628 §3.5 adds to the interval on every `slow_down`. */
export const SLOW_DOWN_STEP_SECONDS = 5;

/** The device authorization response. */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval: number;
}

/** The token response. */
export interface DeviceToken {
  access_token: string;
  token_type: string;
  expires_in?: number;
}

/** Clock and sleep of the polling loop (tests pass their own). */
export interface PollTiming {
  sleep(ms: number): Promise<void>;
  now(): number;
}

/** Asks the cloud for a device code and a user code. */
export async function requestDeviceCode(
  http: HttpClient,
  metadata: CloudMetadata,
): Promise<DeviceAuthorization> {
  const res = await http.send({
    method: "POST",
    url: metadata.device_authorization_endpoint,
    form: { client_id: CLIENT_ID },
    peer: "the cloud service",
  });
  const b = res.body as Partial<DeviceAuthorization> | undefined;
  if (res.status !== 200 || typeof b?.device_code !== "string" || typeof b.user_code !== "string") {
    throw new CliError(
      `the cloud service refused to start a login (${res.status}): ` +
        describeApiError(apiErrorOf(res)),
    );
  }
  return {
    device_code: b.device_code,
    user_code: b.user_code,
    verification_uri: String(b.verification_uri ?? ""),
    verification_uri_complete: typeof b.verification_uri_complete === "string"
      ? b.verification_uri_complete
      : undefined,
    expires_in: typeof b.expires_in === "number" && b.expires_in > 0 ? b.expires_in : 600,
    interval: typeof b.interval === "number" && b.interval > 0
      ? b.interval
      : DEFAULT_INTERVAL_SECONDS,
  };
}

/** Polls until the user decides or the code expires; `onPoll` sees every pending answer. */
export async function pollForToken(
  http: HttpClient,
  metadata: CloudMetadata,
  auth: DeviceAuthorization,
  timing: PollTiming,
  onPoll: (state: { error: string; intervalSeconds: number }) => void = () => {},
): Promise<DeviceToken> {
  let interval = auth.interval;
  const deadline = timing.now() + auth.expires_in * 1000;
  for (;;) {
    await timing.sleep(interval * 1000);
    if (timing.now() >= deadline) throw expired();
    const res = await http.send({
      method: "POST",
      url: metadata.token_endpoint,
      form: { grant_type: DEVICE_GRANT_TYPE, device_code: auth.device_code, client_id: CLIENT_ID },
      peer: "the cloud service",
    });
    const body = res.body as Partial<DeviceToken> | undefined;
    if (res.status === 200 && typeof body?.access_token === "string") {
      return {
        access_token: body.access_token,
        token_type: String(body.token_type ?? "Bearer"),
        expires_in: body.expires_in,
      };
    }
    const error = apiErrorOf(res);
    switch (error.code) {
      case "authorization_pending":
        break;
      case "slow_down":
        interval += SLOW_DOWN_STEP_SECONDS;
        break;
      case "rate_limited": {
        const retry = Number(res.headers.get("retry-after"));
        if (Number.isFinite(retry) && retry > 0) await timing.sleep(retry * 1000);
        break;
      }
      case "access_denied":
        throw new CliError("the login was denied in the browser", { exitCode: EXIT.auth });
      case "expired_token":
        throw expired();
      default:
        throw new CliError(
          `the cloud service refused the login (${res.status}): ${describeApiError(error)}`,
          { exitCode: EXIT.auth, hint: "Run `gwcli login` to start again." },
        );
    }
    onPoll({ error: error.code, intervalSeconds: interval });
  }
}

function expired(): CliError {
  return new CliError("the code expired before it was approved", {
    exitCode: EXIT.auth,
    hint: "Run `gwcli login` to start again.",
  });
}
