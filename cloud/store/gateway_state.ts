/**
 * What gateways report (last seen, status and health, apply outcomes, their local configuration)
 * and the desired-configuration versions. Kept beside the gateway record, so reports do not bump
 * the record's revision or the team's configuration revision.
 */
import type { GatewayStatusBody } from "../../shared/mod.ts";
import { type Clock, iso } from "../clock.ts";
import { addVersion, type ConfigHistoryStore, type ConfigSnapshot } from "./config_history.ts";
import { StoreError } from "./errors.ts";
import { sha256Hex } from "./ids.ts";
import { K } from "./keys.ts";
import { readChunks } from "./kv.ts";

/** The outcome of applying a configuration version. */
export interface ApplyReport {
  version: number;
  status: "applied" | "failed";
  errors: { path?: string; message: string }[];
  reported_at: string;
}

/** A status and health report. */
export interface StatusReport extends GatewayStatusBody {
  reported_at: string;
}

/** Metadata of the configuration a gateway uploaded. */
export interface ReportedConfigMeta {
  size: number;
  sha256: string;
  uploaded_at: string;
  /** Problems the cloud's validator found in it (it is stored either way). */
  problems: { path: string; line?: number; message: string }[];
}

/** Everything reported by one gateway. */
export interface GatewayState {
  last_seen_at: string | null;
  last_status: StatusReport | null;
  last_apply: ApplyReport | null;
  applied_version: number | null;
  reported_config: ReportedConfigMeta | null;
}

/** The current desired-configuration version of a gateway. */
export interface ConfigVersion {
  version: number;
  sha256: string;
  generated_at: string;
}

const EMPTY: GatewayState = {
  last_seen_at: null,
  last_status: null,
  last_apply: null,
  applied_version: null,
  reported_config: null,
};

/** Largest uploaded configuration, bytes. */
export const MAX_REPORTED_CONFIG_BYTES = 512 * 1024;
const CHUNK = 48 * 1024;
const SEEN_GRANULARITY_MS = 5_000;

/** Gateway reports and configuration versions over KV. */
export class GatewayStateStore {
  #kv: Deno.Kv;
  #clock: Clock;
  /** When this instance last wrote `last_seen_at` of each gateway (saves a read per call). */
  #seenWritten = new Map<string, number>();
  #history?: ConfigHistoryStore;

  constructor(kv: Deno.Kv, clock: Clock) {
    this.#kv = kv;
    this.#clock = clock;
  }

  /** The reports of a gateway (empty when it never reported). */
  async get(teamId: string, gatewayId: string): Promise<GatewayState> {
    return (await this.#kv.get<GatewayState>(K.gatewayState(teamId, gatewayId))).value ??
      { ...EMPTY };
  }

  /** Notes that the gateway called (at most every few seconds). */
  async seen(teamId: string, gatewayId: string): Promise<void> {
    const now = this.#clock.now();
    const key = `${teamId}/${gatewayId}`;
    if (now - (this.#seenWritten.get(key) ?? -Infinity) < SEEN_GRANULARITY_MS) return;
    if (this.#seenWritten.size > 10_000) this.#seenWritten.clear();
    this.#seenWritten.set(key, now);
    await this.#change(
      teamId,
      gatewayId,
      (s) =>
        s.last_seen_at && now - Date.parse(s.last_seen_at) < SEEN_GRANULARITY_MS
          ? null
          : { ...s, last_seen_at: iso(now) },
    );
  }

  /** Stores an apply report. */
  async reportApply(teamId: string, gatewayId: string, report: ApplyReport): Promise<GatewayState> {
    return await this.#change(teamId, gatewayId, (s) => ({
      ...s,
      last_seen_at: report.reported_at,
      last_apply: report,
      applied_version: report.status === "applied" ? report.version : s.applied_version,
    })) as GatewayState;
  }

  /** Stores a status report. */
  async reportStatus(
    teamId: string,
    gatewayId: string,
    report: StatusReport,
  ): Promise<GatewayState> {
    return await this.#change(teamId, gatewayId, (s) => ({
      ...s,
      last_seen_at: report.reported_at,
      last_status: report,
    })) as GatewayState;
  }

  /** Stores the gateway's own configuration text (in chunks) and its metadata. */
  async storeReportedConfig(
    teamId: string,
    gatewayId: string,
    text: string,
    problems: ReportedConfigMeta["problems"],
  ): Promise<ReportedConfigMeta> {
    const bytes = new TextEncoder().encode(text);
    if (bytes.byteLength > MAX_REPORTED_CONFIG_BYTES) {
      throw new StoreError(
        "too_large",
        `configurations are limited to ${MAX_REPORTED_CONFIG_BYTES} bytes`,
      );
    }
    const meta: ReportedConfigMeta = {
      size: bytes.byteLength,
      sha256: await sha256Hex(bytes),
      uploaded_at: iso(this.#clock.now()),
      problems: problems.slice(0, 100),
    };
    const op = this.#kv.atomic();
    for await (const e of this.#kv.list({ prefix: K.reportedConfig(teamId, gatewayId) })) {
      op.delete(e.key);
    }
    for (let i = 0; i * CHUNK < bytes.byteLength; i++) {
      op.set(K.reportedChunk(teamId, gatewayId, i), bytes.slice(i * CHUNK, (i + 1) * CHUNK));
    }
    await op.commit();
    await this.#change(
      teamId,
      gatewayId,
      (s) => ({ ...s, reported_config: meta, last_seen_at: meta.uploaded_at }),
    );
    return meta;
  }

  /** The configuration text the gateway uploaded last, or null. */
  async reportedConfig(teamId: string, gatewayId: string): Promise<string | null> {
    const bytes = await readChunks(this.#kv, K.reportedConfig(teamId, gatewayId));
    return bytes === null ? null : new TextDecoder().decode(bytes);
  }

  /**
   * The version of the desired configuration whose hash is `sha256` (a new version when it
   * changed, recorded in the history with the snapshot `describe` returns).
   */
  async version(
    teamId: string,
    gatewayId: string,
    sha256: string,
    describe?: () => Promise<
      { snapshot: ConfigSnapshot; source: "records" | `rollback to ${number}` }
    >,
  ): Promise<ConfigVersion> {
    let described: Awaited<ReturnType<NonNullable<typeof describe>>> | undefined;
    for (let i = 0; i < 8; i++) {
      const entry = await this.#kv.get<ConfigVersion>(K.gatewayConfig(teamId, gatewayId));
      if (entry.value?.sha256 === sha256) return entry.value;
      const next: ConfigVersion = {
        version: (entry.value?.version ?? 0) + 1,
        sha256,
        generated_at: iso(this.#clock.now()),
      };
      const op = this.#kv.atomic().check(entry).set(K.gatewayConfig(teamId, gatewayId), next);
      if (describe) {
        described ??= await describe();
        addVersion(op, teamId, gatewayId, {
          ...next,
          source: described.source,
          pipelines: described.snapshot.pipelines,
          applied_at: null,
          failed_at: null,
        }, described.snapshot);
      }
      if ((await op.commit()).ok) {
        await this.#history?.prune(teamId, gatewayId, next.version);
        return next;
      }
    }
    throw new StoreError("conflict", "too many concurrent configuration changes; retry");
  }

  /** The history store (set by the Store), for pruning after a new version. */
  set history(history: ConfigHistoryStore) {
    this.#history = history;
  }

  /** The last known desired-configuration version, or null before the first pull. */
  async currentVersion(teamId: string, gatewayId: string): Promise<ConfigVersion | null> {
    return (await this.#kv.get<ConfigVersion>(K.gatewayConfig(teamId, gatewayId))).value;
  }

  /** Keys deleted with the gateway. */
  async keys(teamId: string, gatewayId: string): Promise<Deno.KvKey[]> {
    const keys: Deno.KvKey[] = [
      K.gatewayState(teamId, gatewayId),
      K.gatewayConfig(teamId, gatewayId),
    ];
    for await (const e of this.#kv.list({ prefix: K.reportedConfig(teamId, gatewayId) })) {
      keys.push(e.key);
    }
    return keys;
  }

  async #change(
    teamId: string,
    gatewayId: string,
    fn: (s: GatewayState) => GatewayState | null,
  ): Promise<GatewayState> {
    const key = K.gatewayState(teamId, gatewayId);
    for (let i = 0; i < 8; i++) {
      const entry = await this.#kv.get<GatewayState>(key);
      const current = entry.value ?? { ...EMPTY };
      const next = fn(current);
      if (!next) return current;
      if ((await this.#kv.atomic().check(entry).set(key, next).commit()).ok) return next;
    }
    throw new StoreError("conflict", "too many concurrent reports; retry");
  }
}
