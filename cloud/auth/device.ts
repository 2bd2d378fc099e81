/**
 * The device authorization grant (RFC 8628) for gwcli: the device asks for a device code and a
 * user code, the user approves the user code in the browser, the device polls the token endpoint.
 * Only the SHA-256 of the device code is stored.
 */
import { iso } from "../clock.ts";
import type { DeviceRecord, Team, User } from "../store/mod.ts";
import { randomBase64Url, sha256Hex } from "../store/mod.ts";
import type { CloudOptions } from "../options.ts";
import type { Store } from "../store/mod.ts";
import type { Tokens } from "./jwt.ts";

/** What looking up and deciding a pending device code uses: the clock and the device store. */
export interface DeviceCodes {
  options: Pick<CloudOptions, "clock">;
  store: Pick<Store, "devices">;
}

/**
 * What the device flow (RFC 8628) uses beyond {@link DeviceCodes}: its timings, the base URL
 * shown to the user, the members it checks and the signer of the user token it hands out.
 */
export interface DeviceFlow {
  options: Pick<
    CloudOptions,
    "clock" | "baseUrl" | "deviceCodeTtlSeconds" | "deviceIntervalSeconds" | "userTokenTtlSeconds"
  >;
  store: Pick<Store, "devices" | "identity">;
  jwt: Pick<Tokens, "issueUserToken">;
}

/** Grant type of the device-code token request. */
export const DEVICE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";

/** Public clients allowed to start a device flow, with the name shown on the approval page. */
export const DEVICE_CLIENTS: Record<string, string> = { gwcli: "gwcli (command-line client)" };

/** Letters of user codes: no vowels (no words), no look-alikes (RFC 8628 §6.1). */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

/** The device authorization response (RFC 8628 §3.2). */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The OAuth error codes of the token endpoint. */
export type DeviceTokenError =
  | "authorization_pending"
  | "slow_down"
  | "access_denied"
  | "expired_token"
  | "invalid_grant";

/** The token endpoint's answer: a token, or an OAuth error. */
export type DeviceTokenResult =
  | { ok: true; access_token: string; token_type: "Bearer"; expires_in: number }
  | { ok: false; error: DeviceTokenError; description: string };

/** `bcdf-ghjk` -> `BCDFGHJK`; anything that is not a code letter is dropped. */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[^A-Z]/g, "").slice(0, 16);
}

/** `BCDFGHJK` -> `BCDF-GHJK`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

function newUserCode(): string {
  let code = "";
  while (code.length < 8) {
    // 256 % 20 = 16: skip the top 16 byte values so every letter is equally likely.
    for (const b of crypto.getRandomValues(new Uint8Array(8))) {
      if (b < 240 && code.length < 8) code += USER_CODE_ALPHABET[b % 20];
    }
  }
  return code;
}

/** Starts a device authorization for `clientId`. */
export async function startDeviceAuthorization(
  s: DeviceFlow,
  clientId: string,
  scope: string | null,
): Promise<DeviceAuthorization> {
  const now = s.options.clock.now();
  const ttl = s.options.deviceCodeTtlSeconds;
  for (let attempt = 0; attempt < 5; attempt++) {
    const deviceCode = randomBase64Url(32);
    const userCode = newUserCode();
    const record: DeviceRecord = {
      device_hash: await sha256Hex(deviceCode),
      user_code: userCode,
      client_id: clientId,
      scope,
      created_at: iso(now),
      expires_at: iso(now + ttl * 1000),
      interval: s.options.deviceIntervalSeconds,
      status: "pending",
      last_poll_at: null,
      user_id: null,
      team_id: null,
    };
    if (await s.store.devices.create(record)) {
      const verification = `${s.options.baseUrl}/device`;
      return {
        device_code: deviceCode,
        user_code: formatUserCode(userCode),
        verification_uri: verification,
        verification_uri_complete: `${verification}?user_code=${formatUserCode(userCode)}`,
        expires_in: ttl,
        interval: s.options.deviceIntervalSeconds,
      };
    }
  }
  throw new Error("could not find a free user code");
}

/** Answers one poll of the token endpoint. */
export async function pollDeviceToken(
  s: DeviceFlow,
  deviceCode: string,
  clientId: string,
): Promise<DeviceTokenResult> {
  const hash = await sha256Hex(deviceCode);
  for (let attempt = 0; attempt < 5; attempt++) {
    const entry = await s.store.devices.byHash(hash);
    const record = entry.value;
    if (!record || record.status === "used" || record.client_id !== clientId) {
      return {
        ok: false,
        error: "invalid_grant",
        description: "unknown, used or foreign device code",
      };
    }
    const now = s.options.clock.now();
    if (Date.parse(record.expires_at) <= now) {
      return {
        ok: false,
        error: "expired_token",
        description: "the device code expired; start again",
      };
    }
    const tooSoon = record.last_poll_at !== null &&
      now - record.last_poll_at < record.interval * 1000;
    const next: DeviceRecord = {
      ...record,
      last_poll_at: now,
      interval: tooSoon ? record.interval + 5 : record.interval,
    };
    if (!tooSoon && record.status === "approved") next.status = "used";
    if (!(await s.store.devices.replace(entry as Deno.KvEntry<DeviceRecord>, next))) continue;
    if (tooSoon) {
      return {
        ok: false,
        error: "slow_down",
        description: `polling too fast: wait at least ${next.interval} s between requests`,
      };
    }
    if (record.status === "denied") {
      return { ok: false, error: "access_denied", description: "the user denied the request" };
    }
    if (record.status === "pending") {
      return {
        ok: false,
        error: "authorization_pending",
        description: "waiting for the user to approve",
      };
    }
    const [user, team] = await Promise.all([
      s.store.identity.user(record.user_id!),
      s.store.identity.team(record.team_id!),
    ]);
    if (!user || !team || !(await s.store.identity.membership(team.id, user.id))) {
      return {
        ok: false,
        error: "access_denied",
        description: "the approving user is no longer a member",
      };
    }
    const ttl = s.options.userTokenTtlSeconds;
    const { token } = await s.jwt.issueUserToken(user, team, ttl);
    return { ok: true, access_token: token, token_type: "Bearer", expires_in: ttl };
  }
  throw new Error("device code changed concurrently five times");
}

/** The pending request of a user code, for the approval page; null when unknown or expired. */
export async function pendingByUserCode(
  s: DeviceCodes,
  userCode: string,
): Promise<DeviceRecord | null> {
  const entry = await s.store.devices.byUserCode(normalizeUserCode(userCode));
  const record = entry?.value;
  if (!record || record.status !== "pending") return null;
  return Date.parse(record.expires_at) > s.options.clock.now() ? record : null;
}

/** Approves or denies the pending request of `userCode` as `user` in `team`; false when gone. */
export async function decideDevice(
  s: DeviceCodes,
  userCode: string,
  decision: "approved" | "denied",
  user: User,
  team: Team,
): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const entry = await s.store.devices.byUserCode(normalizeUserCode(userCode));
    const record = entry?.value;
    if (!entry || !record || record.status !== "pending") return false;
    if (Date.parse(record.expires_at) <= s.options.clock.now()) return false;
    const next: DeviceRecord = { ...record, status: decision, user_id: user.id, team_id: team.id };
    if (await s.store.devices.replace(entry as Deno.KvEntry<DeviceRecord>, next)) return true;
  }
  return false;
}
