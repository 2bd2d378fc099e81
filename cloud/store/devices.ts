/** Device authorization requests (RFC 8628), stored by the SHA-256 of the device code. */
import type { Clock } from "../clock.ts";
import { K } from "./keys.ts";

/** The state of a device authorization. */
export type DeviceStatus = "pending" | "approved" | "denied" | "used";

/** A device authorization request. */
export interface DeviceRecord {
  device_hash: string;
  user_code: string;
  client_id: string;
  scope: string | null;
  created_at: string;
  expires_at: string;
  /** Current minimum polling interval, seconds (grows by 5 on every slow_down). */
  interval: number;
  status: DeviceStatus;
  last_poll_at: number | null;
  user_id: string | null;
  team_id: string | null;
}

/** Records stay this long after expiry, so late polls get `expired_token`, not `invalid_grant`. */
const KEEP_AFTER_EXPIRY_MS = 60 * 60 * 1000;

/** Device authorizations over KV. */
export class DeviceStore {
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** Stores a new request; false when the user code is already in use (pick another). */
  async create(record: DeviceRecord): Promise<boolean> {
    const expireIn = Date.parse(record.expires_at) - this.#clock.now() + KEEP_AFTER_EXPIRY_MS;
    const result = await this.#kv.atomic()
      .check({ key: K.deviceByUserCode(record.user_code), versionstamp: null })
      .set(K.device(record.device_hash), record, { expireIn })
      .set(K.deviceByUserCode(record.user_code), record.device_hash, { expireIn })
      .commit();
    return result.ok;
  }

  /** The request of device-code hash `hash` with its versionstamp. */
  async byHash(hash: string): Promise<Deno.KvEntryMaybe<DeviceRecord>> {
    return await this.#kv.get<DeviceRecord>(K.device(hash));
  }

  /** The request whose user code is `userCode`, or null. */
  async byUserCode(userCode: string): Promise<Deno.KvEntryMaybe<DeviceRecord> | null> {
    const hash = (await this.#kv.get<string>(K.deviceByUserCode(userCode))).value;
    return hash ? await this.byHash(hash) : null;
  }

  /** Replaces a request if it did not change since `entry` was read. */
  async replace(entry: Deno.KvEntry<DeviceRecord>, next: DeviceRecord): Promise<boolean> {
    const expireIn = Math.max(
      1000,
      Date.parse(next.expires_at) - this.#clock.now() + KEEP_AFTER_EXPIRY_MS,
    );
    const op = this.#kv.atomic().check(entry).set(K.device(next.device_hash), next, { expireIn });
    if (next.status === "used") op.delete(K.deviceByUserCode(next.user_code));
    return (await op.commit()).ok;
  }
}
