/**
 * A team-scoped repository of one resource kind. Every method takes the team id and builds its
 * keys under that team, so there is no way to read or write another team's records through it.
 * Names (per kind) are unique per team; references to other records are checked on write and
 * indexed, so a record still in use cannot be deleted. Every change writes an audit entry and
 * bumps the team's revision in the same atomic operation.
 */
import { iso } from "../clock.ts";
import type { Clock } from "../clock.ts";
import { type Actor, addAudit, bumpRevision } from "./audit.ts";
import { StoreError } from "./errors.ts";
import { uuidv7 } from "./ids.ts";
import { K, type ResourceKind } from "./keys.ts";
import { listPage, type Page } from "./kv.ts";

/** Fields every resource record has. */
export interface BaseRecord {
  id: string;
  team_id: string;
  name: string;
  created_at: string;
  updated_at: string;
  /** Label of the actor that created it. */
  created_by: string;
  /** Starts at 1, +1 on every update. */
  revision: number;
}

/** The fields a caller provides: everything but the bookkeeping. */
export type RecordInput<T extends BaseRecord> = Omit<T, keyof BaseRecord> & { name: string };

/** A reference from one record to another of the same team. */
export interface Ref {
  kind: ResourceKind;
  id: string;
  /** The field holding it (for messages), e.g. `endpoint_ids.1`. */
  field: string;
}

/** What the repository needs to know about a kind. */
export interface KindSpec<T extends BaseRecord> {
  kind: ResourceKind;
  /** Singular, for messages and audit actions (`pipeline`). */
  singular: string;
  /** The field whose value is unique per team (`name`; `code` for gateways). */
  uniqueField: keyof T & string;
  /** References held by a record. */
  refs(record: T): Ref[];
  /** Extra keys deleted with a record (state kept beside it). */
  cleanup?(kv: Deno.Kv, teamId: string, record: T): Promise<Deno.KvKey[]>;
}

/** Largest serialized record (Deno KV values are limited to 64 KiB). */
export const MAX_RECORD_BYTES = 60 * 1024;

const MAX_ATTEMPTS = 8;
/** Deno KV takes at most 1,000 mutations per commit; keep room for the record's own keys. */
const CLEANUP_IN_COMMIT = 800;

async function deleteInBatches(kv: Deno.Kv, keys: Deno.KvKey[]): Promise<void> {
  for (let i = 0; i < keys.length; i += CLEANUP_IN_COMMIT) {
    const op = kv.atomic();
    for (const key of keys.slice(i, i + CLEANUP_IN_COMMIT)) op.delete(key);
    await op.commit();
  }
}

/** The repository of one kind. */
export class Repo<T extends BaseRecord> {
  readonly spec: KindSpec<T>;
  #kv: Deno.Kv;
  #clock: Clock;

  constructor(kv: Deno.Kv, spec: KindSpec<T>, clock: Clock) {
    this.#kv = kv;
    this.spec = spec;
    this.#clock = clock;
  }

  /** The record `id` of team `teamId`, or null. */
  async get(teamId: string, id: string): Promise<T | null> {
    return (await this.#kv.get<T>(K.record(teamId, this.spec.kind, id))).value;
  }

  /** The record whose unique field is `value` (case-insensitive), or null. */
  async findByUnique(teamId: string, value: string): Promise<T | null> {
    const id = (await this.#kv.get<string>(K.name(teamId, this.spec.kind, value.toLowerCase())))
      .value;
    return id ? await this.get(teamId, id) : null;
  }

  /** A page of the team's records, oldest first. */
  list(
    teamId: string,
    page: { limit: number; cursor?: string; filter?: (r: T) => boolean | Promise<boolean> },
  ): Promise<Page<T>> {
    return listPage<T>(this.#kv, K.records(teamId, this.spec.kind), page);
  }

  /** Every record of the team (for generating configurations). */
  async all(teamId: string): Promise<T[]> {
    const out: T[] = [];
    for await (const e of this.#kv.list<T>({ prefix: K.records(teamId, this.spec.kind) })) {
      out.push(e.value);
    }
    return out;
  }

  /** Records of the team that reference `kind`/`id`, as `{kind, id}` pairs. */
  async referrers(teamId: string, kind: ResourceKind, id: string): Promise<Ref[]> {
    const out: Ref[] = [];
    for await (const e of this.#kv.list<string>({ prefix: K.refsTo(teamId, kind, id) })) {
      out.push({ kind: e.key[5] as ResourceKind, id: e.key[6] as string, field: e.value });
    }
    return out;
  }

  /** Creates a record; fails with name_taken or reference_missing. */
  async create(teamId: string, actor: Actor, input: RecordInput<T>): Promise<T> {
    const now = this.#clock.now();
    const record = {
      ...input,
      id: uuidv7(now),
      team_id: teamId,
      created_at: iso(now),
      updated_at: iso(now),
      created_by: actor.label,
      revision: 1,
    } as unknown as T;
    checkSize(record);
    const unique = this.#uniqueKey(record);
    const op = this.#kv.atomic()
      .check({ key: K.name(teamId, this.spec.kind, unique), versionstamp: null })
      .set(K.record(teamId, this.spec.kind, record.id), record)
      .set(K.name(teamId, this.spec.kind, unique), record.id);
    await this.#addRefs(op, teamId, record, this.spec.refs(record));
    addAudit(op, teamId, now, {
      actor,
      action: `${this.spec.singular}.created`,
      resource: { kind: this.spec.kind, id: record.id, name: record.name },
    });
    bumpRevision(op, teamId);
    const result = await op.commit();
    if (!result.ok) {
      await this.#explainFailedCreate(teamId, unique, record);
      throw new StoreError("conflict", "a concurrent change interfered; retry");
    }
    return record;
  }

  /**
   * Updates record `id` with `change` (called with the current record; returns the new fields).
   * Retries on concurrent changes. `ifRevision` makes it fail with conflict when the record moved on.
   */
  async update(
    teamId: string,
    actor: Actor,
    id: string,
    change: (current: T) => T | Promise<T>,
    ifRevision?: number,
  ): Promise<T> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.#kv.get<T>(K.record(teamId, this.spec.kind, id));
      const current = entry.value;
      if (!current) throw this.#notFound();
      if (ifRevision !== undefined && current.revision !== ifRevision) {
        throw new StoreError(
          "conflict",
          `${this.spec.singular} is at revision ${current.revision}, not ${ifRevision}`,
        );
      }
      const now = this.#clock.now();
      const changed = await change(structuredClone(current));
      const next = {
        ...changed,
        id: current.id,
        team_id: current.team_id,
        created_at: current.created_at,
        created_by: current.created_by,
        updated_at: iso(now),
        revision: current.revision + 1,
      } as T;
      checkSize(next);
      const changedFields = Object.keys(next).filter((k) =>
        !["updated_at", "revision"].includes(k) &&
        JSON.stringify((next as Record<string, unknown>)[k]) !==
          JSON.stringify((current as Record<string, unknown>)[k])
      );
      if (changedFields.length === 0) return current;
      const op = this.#kv.atomic().check(entry).set(K.record(teamId, this.spec.kind, id), next);
      const oldKey = this.#uniqueKey(current);
      const newKey = this.#uniqueKey(next);
      if (oldKey !== newKey) {
        op.check({ key: K.name(teamId, this.spec.kind, newKey), versionstamp: null })
          .delete(K.name(teamId, this.spec.kind, oldKey))
          .set(K.name(teamId, this.spec.kind, newKey), id);
      }
      const before = this.spec.refs(current);
      const after = this.spec.refs(next);
      const same = (a: Ref, b: Ref) => a.kind === b.kind && a.id === b.id;
      for (const r of before) {
        if (!after.some((a) => same(a, r))) {
          op.delete(K.ref(teamId, r.kind, r.id, this.spec.kind, id));
        }
      }
      await this.#addRefs(op, teamId, next, after.filter((r) => !before.some((b) => same(b, r))));
      addAudit(op, teamId, now, {
        actor,
        action: `${this.spec.singular}.updated`,
        resource: { kind: this.spec.kind, id, name: next.name },
        changed: changedFields,
      });
      bumpRevision(op, teamId);
      if ((await op.commit()).ok) return next;
      if (oldKey !== newKey && await this.#taken(teamId, newKey, id)) {
        throw this.#nameTaken(next);
      }
    }
    throw new StoreError("conflict", "too many concurrent changes; retry");
  }

  /** Deletes record `id`; fails with in_use while other records reference it. */
  async delete(teamId: string, actor: Actor, id: string): Promise<T> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const entry = await this.#kv.get<T>(K.record(teamId, this.spec.kind, id));
      const current = entry.value;
      if (!current) throw this.#notFound();
      const referrers = await this.referrers(teamId, this.spec.kind, id);
      if (referrers.length) {
        throw new StoreError(
          "in_use",
          `${this.spec.singular} \`${current.name}\` is used by ${
            referrers.map((r) => `${r.kind}/${r.id}`).join(", ")
          }; remove those references first`,
          { details: { used_by: referrers.map(({ kind, id }) => ({ kind, id })) } },
        );
      }
      const now = this.#clock.now();
      const touch = await this.#kv.get(K.touch(teamId, this.spec.kind, id));
      const op = this.#kv.atomic().check(entry).check(touch)
        .delete(K.record(teamId, this.spec.kind, id))
        .delete(K.name(teamId, this.spec.kind, this.#uniqueKey(current)))
        .delete(K.touch(teamId, this.spec.kind, id));
      for (const r of this.spec.refs(current)) {
        op.delete(K.ref(teamId, r.kind, r.id, this.spec.kind, id));
      }
      // State kept beside the record goes in the same commit while it fits in one; beyond that
      // (a gateway authorized thousands of times) it follows in batches. Leftovers are harmless:
      // tokens and shares of a record that no longer exists are refused.
      const cleanup = await this.spec.cleanup?.(this.#kv, teamId, current) ?? [];
      const inline = cleanup.length <= CLEANUP_IN_COMMIT ? cleanup : [];
      for (const key of inline) op.delete(key);
      addAudit(op, teamId, now, {
        actor,
        action: `${this.spec.singular}.deleted`,
        resource: { kind: this.spec.kind, id, name: current.name },
      });
      bumpRevision(op, teamId);
      if ((await op.commit()).ok) {
        if (!inline.length) await deleteInBatches(this.#kv, cleanup);
        return current;
      }
    }
    throw new StoreError("conflict", "too many concurrent changes; retry");
  }

  /** Checks that every referenced record exists in the team; indexes the references. */
  async #addRefs(op: Deno.AtomicOperation, teamId: string, record: T, refs: Ref[]): Promise<void> {
    const seen = new Set<string>();
    for (const ref of refs) {
      const key = `${ref.kind}/${ref.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const target = await this.#kv.get(K.record(teamId, ref.kind, ref.id));
      if (target.value === null) {
        throw new StoreError(
          "reference_missing",
          `${ref.field}: no ${ref.kind} with id ${ref.id} in this team`,
          { field: ref.field },
        );
      }
      op.check(target)
        .set(K.ref(teamId, ref.kind, ref.id, this.spec.kind, record.id), ref.field)
        .set(K.touch(teamId, ref.kind, ref.id), crypto.randomUUID());
    }
  }

  async #explainFailedCreate(teamId: string, unique: string, record: T): Promise<void> {
    if (await this.#taken(teamId, unique, record.id)) throw this.#nameTaken(record);
    for (const ref of this.spec.refs(record)) {
      if ((await this.#kv.get(K.record(teamId, ref.kind, ref.id))).value === null) {
        throw new StoreError(
          "reference_missing",
          `${ref.field}: no ${ref.kind} with id ${ref.id} in this team`,
          { field: ref.field },
        );
      }
    }
  }

  async #taken(teamId: string, unique: string, ownId: string): Promise<boolean> {
    const holder = (await this.#kv.get<string>(K.name(teamId, this.spec.kind, unique))).value;
    return holder !== null && holder !== ownId;
  }

  #uniqueKey(record: T): string {
    return String(record[this.spec.uniqueField]).toLowerCase();
  }

  #nameTaken(record: T): StoreError {
    const field = this.spec.uniqueField;
    return new StoreError(
      "name_taken",
      `${field}: a ${this.spec.singular} with ${field} \`${
        record[field]
      }\` already exists in this team`,
      { field },
    );
  }

  #notFound(): StoreError {
    return new StoreError("not_found", `${this.spec.singular} not found`);
  }
}

/** Stored size estimate: KV keeps strings as Latin-1 or UTF-16, so non-Latin-1 text counts twice. */
function checkSize(record: unknown): void {
  const text = JSON.stringify(record);
  const size = /[\u0100-\uffff]/.test(text) ? text.length * 2 : text.length;
  if (size > MAX_RECORD_BYTES) {
    throw new StoreError(
      "too_large",
      `the record is ${size} bytes; the largest stored record is ${MAX_RECORD_BYTES} bytes`,
    );
  }
}
