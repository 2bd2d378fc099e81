/**
 * The resource operations behind the REST API (and the MCP tools): validation beyond the body
 * schema, team scoping with shares, and keeping every gateway's configuration valid. A write that
 * would make the configuration of a gateway fail the gateway's own validator is refused with the
 * problems found, so what a gateway pulls always loads.
 */
import type { Clock } from "../clock.ts";
import {
  type Actor,
  type AnyRecord,
  type ConfigSnapshot,
  type ConfigVersion,
  type GatewayRecord,
  type GatewayState,
  type Page,
  type PipelineRecord,
  type RecordInput,
  type RecordOf,
  type ResourceKind,
  sha256Hex,
  type Store,
  StoreError,
  type TransformRecord,
} from "../store/mod.ts";
import { PreviewLimitError, type PreviewOutcome, runPreview } from "../preview/mod.ts";
import { KINDS } from "./kinds.ts";
import {
  checkBackend,
  checkEndpoint,
  checkMiddleware,
  checkNetwork,
  checkTransformSpec,
  type FieldProblem,
} from "./checks.ts";
import {
  type ConfigSources,
  type GeneratedConfig,
  generateGatewayConfig,
  generatePipelineConfig,
  transformText,
} from "./toml.ts";

/** How the caller's team relates to a record. */
export type Access = "owner" | "read" | "write";

/** A record the caller may see, and through what. */
export interface Visible<T> {
  record: T;
  access: Access;
}

/** A gateway with what it reported and its derived status. */
export interface GatewayView extends GatewayRecord {
  status: "pending" | "online" | "degraded" | "offline";
  last_seen_at: string | null;
  config_version: number | null;
  applied_version: number | null;
  last_apply: GatewayState["last_apply"];
  last_status: GatewayState["last_status"];
  reported_config: GatewayState["reported_config"];
}

/** What a list asks for: a page, a name substring, exact field values, a gateway status. */
export interface ListQuery {
  limit: number;
  cursor?: string;
  name?: string;
  where?: Record<string, string | undefined>;
  /** Gateways only: their derived status (`pending`, `online`, `degraded`, `offline`). */
  status?: string;
}

/** A gateway configuration: generated from the records, or a pinned version's snapshot. */
export interface PinnableConfig extends GeneratedConfig {
  /** The snapshot's transform texts by id (pinned configurations serve these, not the records). */
  transformTexts?: Record<string, string>;
  /** The version whose snapshot this is, when the gateway is pinned (rolled back). */
  pinnedTo?: number;
}

/** A generated gateway configuration with its version. */
export interface VersionedConfig extends PinnableConfig {
  version: number;
  generated_at: string;
}

/** What runs previews: the service's PreviewPool, or anything with its `run`. */
export interface PreviewRunner {
  run(spec: unknown, input: unknown): Promise<PreviewOutcome>;
}

/** Previews in this isolate, bounded by the engine's work budget only (tests, tools). */
const IN_ISOLATE: PreviewRunner = {
  run: (spec, input) => Promise.resolve().then(() => runPreview(spec, input)),
};

/** A gateway not heard from for this long is offline (three long polls). */
export const OFFLINE_AFTER_MS = 3 * 60_000;

const CACHE_LIMIT = 1000;

/** Resource operations of the cloud service. */
export class ResourceService {
  #store: Store;
  #baseUrl: string;
  #clock: Clock;
  #previews: PreviewRunner;
  #configCache = new Map<
    string,
    { rev: string; config: PinnableConfig; version?: ConfigVersion }
  >();

  /** `previews` runs JOLT previews (the service's worker pool); by default in this isolate. */
  constructor(store: Store, baseUrl: string, clock: Clock, previews: PreviewRunner = IN_ISOLATE) {
    this.#store = store;
    this.#baseUrl = baseUrl;
    this.#clock = clock;
    this.#previews = previews;
  }

  /**
   * A page of the team's records of `kind` as the API shows them (gateways with their status),
   * filtered by `name` (substring, case-insensitive; a gateway's code too) and by exact values of
   * the kind's filter fields (kinds.ts); other keys of `where` are ignored.
   */
  async find(
    kind: ResourceKind,
    teamId: string,
    query: ListQuery,
  ): Promise<{ items: AnyRecord[]; next_cursor: string | null }> {
    const filter = this.matcher(kind, query);
    const page = await this.list(kind, teamId, {
      limit: query.limit,
      cursor: query.cursor,
      filter,
    });
    const items = await Promise.all(page.items.map((r) => this.view(kind, r, false)));
    return { items, next_cursor: page.next_cursor ?? null };
  }

  /**
   * The test a record of `kind` passes to be in a list asking `query` (name substring, the kind's
   * exact filters, a gateway's status); undefined when the query filters nothing.
   */
  matcher(kind: ResourceKind, query: ListQuery): ((r: AnyRecord) => Promise<boolean>) | undefined {
    const name = query.name?.toLowerCase();
    const wanted = KINDS[kind].filters
      .filter((f) => query.where?.[f] !== undefined)
      .map((f) => [f, String(query.where![f])] as const);
    const status = kind === "gateways" ? query.status : undefined;
    if (!name && !wanted.length && !status) return undefined;
    return async (r: AnyRecord) =>
      (!name || r.name.toLowerCase().includes(name) ||
        (kind === "gateways" && (r as GatewayRecord).code.toLowerCase().includes(name))) &&
      wanted.every(([f, v]) => String((r as unknown as Record<string, unknown>)[f]) === v) &&
      (!status || (await this.gatewayView(r as GatewayRecord)).status === status);
  }

  /** A record as the API shows it: a gateway with its status (`fresh`: configuration rebuilt). */
  async view(kind: ResourceKind, record: AnyRecord, fresh: boolean): Promise<AnyRecord> {
    return kind === "gateways" ? await this.gatewayView(record as GatewayRecord, fresh) : record;
  }

  /** A page of the team's records of `kind`. */
  list<K extends ResourceKind>(
    kind: K,
    teamId: string,
    page: {
      limit: number;
      cursor?: string;
      filter?: (r: RecordOf[K]) => boolean | Promise<boolean>;
    },
  ): Promise<Page<RecordOf[K]>> {
    return this.#store.repos[kind].list(teamId, page) as Promise<Page<RecordOf[K]>>;
  }

  /** A record of the team itself (no shares), or null. */
  get<K extends ResourceKind>(kind: K, teamId: string, id: string): Promise<RecordOf[K] | null> {
    return this.#store.repos[kind].get(teamId, id) as Promise<RecordOf[K] | null>;
  }

  /** A record of the team, or of another team that shared it with this one; null otherwise. */
  async visible<K extends ResourceKind>(
    kind: K,
    teamId: string,
    id: string,
  ): Promise<Visible<RecordOf[K]> | null> {
    const own = await this.get(kind, teamId, id);
    if (own) return { record: own, access: "owner" };
    const grant = await this.#store.shares.grant(teamId, kind, id);
    if (!grant) return null;
    const shared = await this.get(kind, grant.owner_team_id, id);
    return shared ? { record: shared, access: grant.access } : null;
  }

  /**
   * Creates a record from a create request (a REST body or MCP arguments, already checked
   * against the kind's create schema): a gateway is named after its code unless named, a
   * transform's digest is computed on save.
   */
  createFrom<K extends ResourceKind>(
    kind: K,
    teamId: string,
    actor: Actor,
    body: Record<string, unknown>,
  ): Promise<RecordOf[K]> {
    const input = kind === "gateways"
      ? { ...body, name: body.name ?? body.code }
      : kind === "transforms"
      ? { ...body, sha256: "" }
      : body;
    return this.create(kind, teamId, actor, input as unknown as RecordInput<RecordOf[K]>);
  }

  /** Creates a record after checking it. */
  async create<K extends ResourceKind>(
    kind: K,
    teamId: string,
    actor: Actor,
    input: RecordInput<RecordOf[K]>,
  ): Promise<RecordOf[K]> {
    const candidate = await this.#prepare(
      kind,
      teamId,
      {
        ...input,
        id: crypto.randomUUID(),
        team_id: teamId,
      } as unknown as RecordOf[K],
      true,
    );
    await this.#checkGateways(kind, teamId, candidate, true);
    const { id: _id, team_id: _team, ...fields } = candidate as unknown as Record<string, unknown>;
    const repo = this.#store.repos[kind] as unknown as {
      create(t: string, a: Actor, i: unknown): Promise<RecordOf[K]>;
    };
    return await repo.create(teamId, actor, fields);
  }

  /**
   * Applies `patch` to a record the team owns, or holds a write share on. A read share answers
   * forbidden; a record the team cannot see answers not_found.
   */
  async update<K extends ResourceKind>(
    kind: K,
    teamId: string,
    actor: Actor,
    id: string,
    patch: Partial<RecordOf[K]>,
    ifRevision?: number,
  ): Promise<Visible<RecordOf[K]>> {
    const seen = await this.visible(kind, teamId, id);
    if (!seen) throw new StoreError("not_found", `${singular(kind)} not found`);
    if (seen.access === "read") {
      throw new StoreError(
        "forbidden",
        `this ${singular(kind)} is shared with your team read-only`,
      );
    }
    const ownerTeam = seen.record.team_id;
    const repo = this.#store.repos[kind] as unknown as {
      update(
        t: string,
        a: Actor,
        id: string,
        fn: (c: RecordOf[K]) => Promise<RecordOf[K]>,
        rev?: number,
      ): Promise<RecordOf[K]>;
    };
    const record = await repo.update(ownerTeam, actor, id, async (current) => {
      const merged = { ...current, ...withoutUndefined(patch) } as RecordOf[K];
      const checked = await this.#prepare(kind, ownerTeam, merged, false, current);
      await this.#checkGateways(kind, ownerTeam, checked, false);
      return checked;
    }, ifRevision);
    return { record, access: seen.access };
  }

  /** Deletes a record of the team. Shares never grant deletion (forbidden). */
  async delete<K extends ResourceKind>(
    kind: K,
    teamId: string,
    actor: Actor,
    id: string,
  ): Promise<RecordOf[K]> {
    const seen = await this.visible(kind, teamId, id);
    if (!seen) throw new StoreError("not_found", `${singular(kind)} not found`);
    if (seen.access !== "owner") {
      throw new StoreError("forbidden", `only the owning team can delete this ${singular(kind)}`);
    }
    return await this.#store.repos[kind].delete(teamId, actor, id) as RecordOf[K];
  }

  /** A gateway with its reports and derived status. */
  async gatewayView(gateway: GatewayRecord, fresh = false): Promise<GatewayView> {
    const state = await this.#store.gatewayState.get(gateway.team_id, gateway.id);
    const version = fresh
      ? await this.gatewayConfig(gateway.team_id, gateway.id)
      : await this.#store.gatewayState.currentVersion(gateway.team_id, gateway.id);
    return {
      ...gateway,
      status: gatewayStatus(state, version, this.#clock.now()),
      last_seen_at: state.last_seen_at,
      config_version: version?.version ?? null,
      applied_version: state.applied_version,
      last_apply: state.last_apply,
      last_status: state.last_status,
      reported_config: state.reported_config,
    };
  }

  /**
   * The desired configuration of a gateway of the team, with its version. `rev` is the team's
   * revision versionstamp when the caller already read it. Generated configurations and their
   * versions are cached per team revision (any change of the team's records moves it on).
   */
  async gatewayConfig(
    teamId: string,
    gatewayId: string,
    rev?: string | null,
  ): Promise<VersionedConfig> {
    const revision = rev ?? (await this.#store.revision(teamId)).versionstamp ?? "0";
    const cacheKey = `${teamId}/${gatewayId}`;
    let cached = this.#configCache.get(cacheKey);
    if (cached?.rev !== revision) {
      // A pin (a rollback) replaces the records' configuration by a stored snapshot; pinning
      // moves the team's revision on, so the cache never serves the other one.
      const pin = await this.#store.configHistory.pin(teamId, gatewayId);
      const pinned = pin
        ? await this.#store.configHistory.snapshot(teamId, gatewayId, pin.version)
        : null;
      const config: PinnableConfig = pinned
        ? {
          toml: pinned.toml,
          problems: pinned.problems,
          sha256: pinned.sha256,
          transforms: pinned.transforms,
          pipelines: pinned.pipelines,
          skipped: pinned.skipped,
          transformTexts: pinned.transform_texts,
          pinnedTo: pin!.version,
        }
        : await generateGatewayConfig(this.#sources(teamId), gatewayId, this.#baseUrl);
      cached = { rev: revision, config };
      this.#configCache.delete(cacheKey);
      if (this.#configCache.size >= CACHE_LIMIT) {
        this.#configCache.delete(this.#configCache.keys().next().value!);
      }
      this.#configCache.set(cacheKey, cached);
    }
    // The version belongs to the content: unchanged revision, unchanged content, same version.
    const config = cached.config;
    cached.version ??= await this.#store.gatewayState.version(
      teamId,
      gatewayId,
      config.sha256,
      async () => ({
        snapshot: await this.#snapshot(teamId, config),
        source: config.pinnedTo ? `rollback to ${config.pinnedTo}` as const : "records",
      }),
    );
    return {
      ...config,
      version: cached.version.version,
      generated_at: cached.version.generated_at,
    };
  }

  /** What a version keeps: the configuration and the text of each transform it needs. */
  async #snapshot(teamId: string, config: PinnableConfig): Promise<ConfigSnapshot> {
    const texts: Record<string, string> = { ...config.transformTexts };
    for (const t of config.transforms) {
      if (texts[t.id] !== undefined) continue;
      const record = await this.get("transforms", teamId, t.id);
      if (record) texts[t.id] = transformText(record.spec);
    }
    return {
      toml: config.toml,
      sha256: config.sha256,
      transforms: config.transforms,
      transform_texts: texts,
      pipelines: config.pipelines,
      skipped: config.skipped,
      problems: config.problems,
    };
  }

  /**
   * The configuration a gateway would get with `draft` (a record of `kind`, new or changed) in
   * place of the stored one: what the pipeline builder shows before publishing.
   */
  async draftGatewayConfig(
    teamId: string,
    gatewayId: string,
    kind: ResourceKind,
    draft: AnyRecord,
  ): Promise<GeneratedConfig> {
    return await generateGatewayConfig(
      this.#sources(teamId, draft, kind),
      gatewayId,
      this.#baseUrl,
    );
  }

  /** The configuration of one pipeline on its own, also for a draft not stored yet. */
  async draftPipelineConfig(teamId: string, pipeline: PipelineRecord): Promise<GeneratedConfig> {
    return await generatePipelineConfig(
      this.#sources(teamId, pipeline, "pipelines"),
      pipeline,
      this.#baseUrl,
    );
  }

  /** The configuration of one pipeline of the team on its own (for review). */
  async pipelineConfig(teamId: string, pipeline: PipelineRecord): Promise<GeneratedConfig> {
    return await generatePipelineConfig(this.#sources(teamId), pipeline, this.#baseUrl);
  }

  /**
   * Runs a JOLT spec on a sample input without storing anything (in a worker, with a deadline).
   * Problems of the spec or the input are `invalid`; a spent work budget or a passed deadline is
   * a PreviewLimitError (422), too many previews waiting one too (503).
   */
  async preview(spec: unknown, input: unknown): Promise<{ output: unknown }> {
    const outcome = await this.#previews.run(spec, input);
    switch (outcome.kind) {
      case "output":
        return { output: outcome.output };
      case "problems":
        throw invalid(outcome.problems);
      case "budget":
        throw new PreviewLimitError("transform_budget_exceeded", outcome.message, {
          budget_steps: outcome.limit,
        });
    }
  }

  /** Checks a candidate record of `kind` and fills in derived fields. */
  async #prepare<K extends ResourceKind>(
    kind: K,
    teamId: string,
    candidate: RecordOf[K],
    creating: boolean,
    current?: RecordOf[K],
  ): Promise<RecordOf[K]> {
    const r = candidate as AnyRecord;
    let problems: FieldProblem[] = [];
    switch (kind) {
      case "endpoints":
      case "backends": {
        const rec = r as RecordOf["endpoints"] | RecordOf["backends"];
        const service = await this.get("services", teamId, rec.service_id);
        if (!service) {
          throw new StoreError(
            "reference_missing",
            `service_id: no services with id ${rec.service_id} in this team`,
            {
              field: "service_id",
            },
          );
        }
        problems = kind === "endpoints"
          ? checkEndpoint(rec as RecordOf["endpoints"], service)
          : checkBackend(rec as RecordOf["backends"], service);
        break;
      }
      case "middleware":
        problems = checkMiddleware(r as RecordOf["middleware"]);
        break;
      case "networks":
        problems = checkNetwork(r as RecordOf["networks"]);
        break;
      case "transforms": {
        const t = r as TransformRecord;
        problems = checkTransformSpec(t.spec);
        if (!problems.length) t.sha256 = await sha256Hex(transformText(t.spec));
        break;
      }
      case "services":
        if (!creating && current) {
          problems = await this.#serviceUsers(teamId, r as RecordOf["services"]);
        }
        break;
    }
    if (problems.length) throw invalid(problems);
    return candidate;
  }

  /** Endpoints and backends whose type an updated service would no longer allow. */
  async #serviceUsers(teamId: string, service: RecordOf["services"]): Promise<FieldProblem[]> {
    const problems: FieldProblem[] = [];
    for (const ref of await this.#store.repos.services.referrers(teamId, "services", service.id)) {
      if (ref.kind === "endpoints") {
        const e = await this.get("endpoints", teamId, ref.id);
        if (e && !service.endpoint_types.includes(e.type)) {
          problems.push({
            field: "endpoint_types",
            message: `endpoint \`${e.name}\` of this service has type ${e.type}`,
          });
        }
      } else if (ref.kind === "backends") {
        const b = await this.get("backends", teamId, ref.id);
        if (b && !service.backend_types.includes(b.type)) {
          problems.push({
            field: "backend_types",
            message: `backend \`${b.name}\` of this service has type ${b.type}`,
          });
        }
      }
    }
    return problems;
  }

  /** Refuses a change that would break the configuration of a gateway it reaches. */
  async #checkGateways<K extends ResourceKind>(
    kind: K,
    teamId: string,
    candidate: RecordOf[K],
    creating: boolean,
  ): Promise<void> {
    if (!["pipelines", "endpoints", "backends", "middleware", "networks"].includes(kind)) return;
    if (creating && kind !== "pipelines") return;
    const gateways = await this.#affectedGateways(kind, teamId, candidate as AnyRecord);
    const sources = this.#sources(teamId, candidate as AnyRecord, kind);
    for (const gatewayId of gateways) {
      const config = await generateGatewayConfig(sources, gatewayId, this.#baseUrl);
      if (config.problems.length) {
        throw new StoreError(
          "invalid",
          `this change would make the configuration of gateway ${gatewayId} invalid: ${
            config.problems[0].path
          }: ${config.problems[0].message}`,
          { details: { gateway_id: gatewayId, problems: config.problems } },
        );
      }
    }
  }

  async #affectedGateways(kind: ResourceKind, teamId: string, r: AnyRecord): Promise<Set<string>> {
    const out = new Set<string>();
    const pipelinesUsing = async (k: ResourceKind, id: string) => {
      for (const ref of await this.#store.repos.pipelines.referrers(teamId, k, id)) {
        if (ref.kind !== "pipelines") continue;
        const p = await this.get("pipelines", teamId, ref.id);
        if (p?.gateway_id) out.add(p.gateway_id);
      }
    };
    if (kind === "pipelines") {
      const p = r as PipelineRecord;
      if (p.gateway_id) out.add(p.gateway_id);
    } else if (kind === "networks") {
      for (const ref of await this.#store.repos.networks.referrers(teamId, "networks", r.id)) {
        if (ref.kind === "endpoints") await pipelinesUsing("endpoints", ref.id);
      }
    } else {
      await pipelinesUsing(kind, r.id);
    }
    return out;
  }

  /** Reads the team's records, with `override` (a candidate of `kind`) in place of the stored one. */
  #sources(teamId: string, override?: AnyRecord, kind?: ResourceKind): ConfigSources {
    return {
      get: async <K extends ResourceKind>(k: K, id: string) =>
        (override && k === kind && override.id === id ? override : await this.get(k, teamId, id)) as
          | RecordOf[K]
          | null,
      pipelinesOf: async (gatewayId: string) => {
        const ids = new Set<string>();
        for (
          const ref of await this.#store.repos.gateways.referrers(teamId, "gateways", gatewayId)
        ) {
          if (ref.kind === "pipelines") ids.add(ref.id);
        }
        if (kind === "pipelines" && override) ids.add(override.id);
        const out: PipelineRecord[] = [];
        for (const id of ids) {
          const p = kind === "pipelines" && override?.id === id
            ? override as PipelineRecord
            : await this.get("pipelines", teamId, id);
          if (p?.gateway_id === gatewayId) out.push(p);
        }
        return out;
      },
    };
  }
}

/** The derived status of a gateway. */
export function gatewayStatus(
  state: GatewayState,
  version: ConfigVersion | null,
  now: number,
): GatewayView["status"] {
  if (!state.last_seen_at) return "pending";
  if (now - Date.parse(state.last_seen_at) > OFFLINE_AFTER_MS) return "offline";
  const failedApply = state.last_apply?.status === "failed" &&
    (version === null || state.last_apply.version === version.version);
  if (failedApply || (state.last_status && state.last_status.health !== "healthy")) {
    return "degraded";
  }
  return "online";
}

function invalid(problems: FieldProblem[]): StoreError {
  const first = problems[0];
  return new StoreError("invalid", `${first.field}: ${first.message}`, {
    field: first.field,
    details: { fields: problems },
  });
}

function singular(kind: ResourceKind): string {
  return kind === "middleware" ? "middleware" : kind.replace(/s$/, "");
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
