/**
 * The cloud identity a gateway is pinned to: the issuer, team and gateway id of the first machine
 * token it accepted (`<state_dir>/cloud-pin.json`, 0600). Gateway codes are unique only within a
 * team, so another team could obtain a valid machine token for the same code; with the pin, a
 * token for another team, gateway id or issuer is refused, whatever its code. Changing the pin is
 * an explicit operator action (`POST /{prefix}/cloud-pin/reset`, logged), never a side effect.
 */
import { decodeTokenClaims, type MachineTokenPayload } from "../../shared/mod.ts";
import { readTextIfExists, removeIfExists, writeFileAtomic } from "../../shared/mod.ts";

/** Name of the pin file in the state directory. */
export const PIN_FILE = "cloud-pin.json";

/** What the gateway is pinned to. */
export interface CloudPin {
  issuer: string;
  team_id: string;
  gateway_id: string;
  /** ISO time the pin was set. */
  pinned_at: string;
}

/** The identity a token would pin, or undefined when its claims lack one. */
export function identityOf(payload: MachineTokenPayload): Omit<CloudPin, "pinned_at"> | undefined {
  const claims = decodeTokenClaims(payload.machine_token);
  if (typeof claims?.iss !== "string" || typeof claims?.team_id !== "string") return undefined;
  return { issuer: claims.iss, team_id: claims.team_id, gateway_id: payload.gateway_id };
}

/** Why `payload` does not match `pin` (one sentence), or undefined when it does. */
export function pinMismatch(pin: CloudPin, payload: MachineTokenPayload): string | undefined {
  const id = identityOf(payload);
  if (!id) return "machine_token: it names no issuer and team, so it cannot match the pin";
  const differs = (["issuer", "team_id", "gateway_id"] as const).filter((k) => id[k] !== pin[k]);
  if (differs.length === 0) return undefined;
  return `machine_token: this gateway is pinned to gateway ${pin.gateway_id} of team ` +
    `${pin.team_id} at ${pin.issuer}; the token is for ` +
    differs.map((k) => `${k} ${id[k]}`).join(", ") +
    ". To move the gateway to another team or cloud, reset the pin first " +
    "(POST /{prefix}/cloud-pin/reset)";
}

/** The pin file of a state directory. */
export function pinPath(stateDir: string): string {
  return `${stateDir}/${PIN_FILE}`;
}

/** Reads the pin; undefined when there is none. A damaged file is an error (never a silent reset). */
export async function readPin(stateDir: string): Promise<CloudPin | undefined> {
  const text = await readTextIfExists(pinPath(stateDir));
  if (text === undefined) return undefined;
  try {
    const o = JSON.parse(text);
    if (
      typeof o.issuer === "string" && typeof o.team_id === "string" &&
      typeof o.gateway_id === "string"
    ) {
      return {
        issuer: o.issuer,
        team_id: o.team_id,
        gateway_id: o.gateway_id,
        pinned_at: String(o.pinned_at ?? ""),
      };
    }
  } catch {
    // reported below
  }
  throw new Error(
    `${pinPath(stateDir)} is not a cloud pin; fix or remove it (removing it is a pin reset)`,
  );
}

/** Writes the pin for `payload`'s identity; returns it (undefined when the token names none). */
export async function writePin(
  stateDir: string,
  payload: MachineTokenPayload,
  now: number,
): Promise<CloudPin | undefined> {
  const id = identityOf(payload);
  if (!id) return undefined;
  const pin: CloudPin = { ...id, pinned_at: new Date(now).toISOString() };
  await writeFileAtomic(pinPath(stateDir), JSON.stringify(pin, null, 2) + "\n", { mode: 0o600 });
  return pin;
}

/** Removes the pin; true when there was one. */
export function removePin(stateDir: string): Promise<boolean> {
  return removeIfExists(pinPath(stateDir));
}
