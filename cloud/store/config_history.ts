/**
 * The history of each gateway's desired configuration: every version keeps its metadata and a
 * snapshot (the TOML, the transforms it needs with their text), so that any two versions can be
 * compared and a gateway can be rolled back to one. The newest {@link KEPT_VERSIONS} are kept.
 * A pin makes a gateway follow one snapshot instead of its records until the pin is removed.
 */
import { type Clock, iso } from "../clock.ts";
import { type Actor, bumpRevision } from "./audit.ts";
import { addAudit } from "./audit.ts";
import { K } from "./keys.ts";
import { readChunks } from "./kv.ts";

/** Versions kept per gateway (older ones are deleted as new ones come). */
export const KEPT_VERSIONS = 50;
/** Largest snapshot kept (a bigger configuration is versioned without a snapshot). */
export const MAX_SNAPSHOT_BYTES = 512 * 1024;
const CHUNK = 48 * 1024;

/** What one version of a gateway's desired configuration was. */
export interface ConfigSnapshot {
  toml: string | null;
  sha256: string;
  transforms: { id: string; name: string; file: string; sha256: string }[];
  /** The text of each needed transform at this version, by transform id. */
  transform_texts: Record<string, string>;
  pipelines: string[];
  skipped: { pipeline: string; reason: string }[];
  problems: { file: string; path: string; line?: number; message: string }[];
}

/** The metadata of a stored version. */
export interface VersionMeta {
  version: number;
  sha256: string;
  generated_at: string;
  /** Where it came from: the records, or a rollback to an earlier version's snapshot. */
  source: "records" | `rollback to ${number}`;
  /** Bytes of the snapshot; 0 when it was too large to keep (no diff or rollback then). */
  snapshot_bytes: number;
  pipelines: string[];
  /** When the gateway reported applying it, or failing to. */
  applied_at: string | null;
  failed_at: string | null;
}

/** A gateway following one version's snapshot instead of its records. */
export interface GatewayPin {
  version: number;
  pinned_at: string;
  pinned_by: string;
}

/** Adds the writes of a new version (metadata and snapshot chunks) to `op`. */
export function addVersion(
  op: Deno.AtomicOperation,
  teamId: string,
  gatewayId: string,
  meta: Omit<VersionMeta, "snapshot_bytes">,
  snapshot: ConfigSnapshot,
): void {
  const bytes = new TextEncoder().encode(JSON.stringify(snapshot));
  const keep = bytes.byteLength <= MAX_SNAPSHOT_BYTES;
  op.set(K.configVersion(teamId, gatewayId, meta.version), {
    ...meta,
    snapshot_bytes: keep ? bytes.byteLength : 0,
  });
  if (!keep) return;
  for (let i = 0; i * CHUNK < bytes.byteLength; i++) {
    op.set(
      [...K.configVersionText(teamId, gatewayId, meta.version), i],
      bytes.slice(i * CHUNK, (i + 1) * CHUNK),
    );
  }
}

/** Reads the history; rolls back and forward. */
export class ConfigHistoryStore {
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** The kept versions of a gateway, newest first. */
  async list(teamId: string, gatewayId: string): Promise<VersionMeta[]> {
    const out: VersionMeta[] = [];
    for await (
      const e of this.#kv.list<VersionMeta>({ prefix: K.configVersions(teamId, gatewayId) }, {
        reverse: true,
      })
    ) out.push(e.value);
    return out;
  }

  /** One version's metadata, or null. */
  async meta(teamId: string, gatewayId: string, version: number): Promise<VersionMeta | null> {
    return (await this.#kv.get<VersionMeta>(K.configVersion(teamId, gatewayId, version))).value;
  }

  /** One version's snapshot, or null (unknown, deleted, or too large to have been kept). */
  async snapshot(
    teamId: string,
    gatewayId: string,
    version: number,
  ): Promise<ConfigSnapshot | null> {
    const all = await readChunks(this.#kv, K.configVersionText(teamId, gatewayId, version));
    if (all === null) return null;
    return JSON.parse(new TextDecoder().decode(all)) as ConfigSnapshot;
  }

  /** Deletes versions older than the newest {@link KEPT_VERSIONS} (after a new one). */
  async prune(teamId: string, gatewayId: string, newest: number): Promise<void> {
    const pin = await this.pin(teamId, gatewayId);
    const below = newest - KEPT_VERSIONS;
    if (below < 1) return;
    const old: Deno.KvKey[] = [];
    for await (
      const e of this.#kv.list({
        start: [...K.configVersions(teamId, gatewayId), 0],
        end: [...K.configVersions(teamId, gatewayId), below + 1],
      })
    ) {
      if (pin && e.key.at(-1) === pin.version) continue;
      old.push(e.key);
    }
    for (const key of old) {
      const version = key.at(-1) as number;
      const op = this.#kv.atomic().delete(key);
      for await (
        const c of this.#kv.list({ prefix: K.configVersionText(teamId, gatewayId, version) })
      ) op.delete(c.key);
      await op.commit();
    }
  }

  /** Notes that the gateway applied `version` (or failed to). */
  async markApplied(
    teamId: string,
    gatewayId: string,
    version: number,
    status: "applied" | "failed",
    at: string,
  ): Promise<void> {
    const key = K.configVersion(teamId, gatewayId, version);
    for (let i = 0; i < 5; i++) {
      const entry = await this.#kv.get<VersionMeta>(key);
      if (!entry.value) return;
      const next = status === "applied"
        ? { ...entry.value, applied_at: at }
        : { ...entry.value, failed_at: at };
      if ((await this.#kv.atomic().check(entry).set(key, next).commit()).ok) return;
    }
  }

  /** The pin of a gateway, or null when it follows its records. */
  async pin(teamId: string, gatewayId: string): Promise<GatewayPin | null> {
    return (await this.#kv.get<GatewayPin>(K.gatewayPin(teamId, gatewayId))).value;
  }

  /**
   * Pins a gateway to `version`'s snapshot (a rollback): the gateway's next pull gets that
   * content as a new version. False when the version has no snapshot.
   */
  async pinTo(
    teamId: string,
    gatewayId: string,
    gatewayCode: string,
    version: number,
    actor: Actor,
  ): Promise<boolean> {
    const meta = await this.meta(teamId, gatewayId, version);
    if (!meta || meta.snapshot_bytes === 0) return false;
    const pin: GatewayPin = {
      version,
      pinned_at: iso(this.#clock.now()),
      pinned_by: actor.label,
    };
    const op = this.#kv.atomic().set(K.gatewayPin(teamId, gatewayId), pin);
    bumpRevision(op, teamId);
    addAudit(op, teamId, this.#clock.now(), {
      actor,
      action: "gateway.config_rolled_back",
      resource: { kind: "gateways", id: gatewayId, name: `${gatewayCode} to version ${version}` },
    });
    return (await op.commit()).ok;
  }

  /** Removes a pin: the gateway follows its records again. False when there was none. */
  async unpin(
    teamId: string,
    gatewayId: string,
    gatewayCode: string,
    actor: Actor,
  ): Promise<boolean> {
    const entry = await this.#kv.get<GatewayPin>(K.gatewayPin(teamId, gatewayId));
    if (!entry.value) return false;
    const op = this.#kv.atomic().check(entry).delete(K.gatewayPin(teamId, gatewayId));
    bumpRevision(op, teamId);
    addAudit(op, teamId, this.#clock.now(), {
      actor,
      action: "gateway.config_resumed",
      resource: { kind: "gateways", id: gatewayId, name: gatewayCode },
    });
    return (await op.commit()).ok;
  }

  /** Keys deleted with the gateway. */
  async keys(teamId: string, gatewayId: string): Promise<Deno.KvKey[]> {
    const keys: Deno.KvKey[] = [K.gatewayPin(teamId, gatewayId)];
    for (
      const prefix of [
        K.configVersions(teamId, gatewayId),
        K.configVersionTexts(teamId, gatewayId),
      ]
    ) {
      for await (const e of this.#kv.list({ prefix })) keys.push(e.key);
    }
    return keys;
  }
}
