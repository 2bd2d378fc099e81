/**
 * The tracking store: one SQLite database (`node:sqlite`, WAL mode) under `[tracking] path`.
 * Each data-plane isolate opens its own connection and writes its batches in one transaction;
 * WAL lets the management API read while they write, and a process killed mid-write leaves the
 * last committed transaction readable (the WAL is replayed or ignored on the next open).
 *
 * Tables: `messages` (one row per tracked message: searchable columns, JSON metadata, the
 * encrypted content blob) and `fields` (key/value pairs of the identifying metadata, indexed,
 * for exact-match search). Record ids sort by time: `<ms base36, 9>-<random, 8>`.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { GatewayError } from "../errors.ts";
import type { TrackedBackendCall, TrackedMessage, TrackingPage, TrackingQuery } from "./types.ts";
import { aliasKeys } from "./fields.ts";

/** The database's file name inside `[tracking] path`. */
export const STORE_FILE = "messages.db";

/** One row to write. */
export interface StoredRecord {
  id: string;
  time: number;
  request_id: string;
  pipeline: string;
  endpoint: string;
  protocol: string;
  method: string;
  path: string;
  status: number;
  error_code?: string;
  duration_ms: number;
  backends: TrackedBackendCall[];
  metadata: Record<string, string>;
  stages: string[];
  replay_of?: string;
  actor?: string;
  edited?: boolean;
  /** The encrypted content of the stages, if kept (content.ts). */
  content?: Uint8Array;
}

/** The content key a batch is sealed with: written with the batch when it is new. */
export interface BatchKey {
  /** Its row, once written. */
  id?: number;
  created: number;
  /** The key wrapped with age. */
  wrapped: Uint8Array;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  time INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  pipeline TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  protocol TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status INTEGER NOT NULL,
  error_code TEXT,
  duration_ms REAL NOT NULL,
  backends TEXT NOT NULL,
  metadata TEXT NOT NULL,
  stages TEXT NOT NULL,
  replay_of TEXT,
  actor TEXT,
  edited INTEGER NOT NULL DEFAULT 0,
  content BLOB,
  key_id INTEGER,
  size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created INTEGER NOT NULL,
  wrapped BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_time ON messages(time, seq);
CREATE INDEX IF NOT EXISTS messages_pipeline ON messages(pipeline, time, seq);
CREATE INDEX IF NOT EXISTS messages_key ON messages(key_id);
CREATE TABLE IF NOT EXISTS fields (
  seq INTEGER NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fields_kv ON fields(key, value, seq);
CREATE INDEX IF NOT EXISTS fields_seq ON fields(seq);
`;

/** Longest metadata value indexed for search (longer ones are kept, not indexed). */
const MAX_FIELD_VALUE = 256;
/** Most metadata keys indexed per message. */
const MAX_FIELDS = 64;
/** A content key seals new records for at most this long (then the next one does). */
export const CONTENT_KEY_MAX_AGE_MS = 10 * 60_000;
/** Largest page of a search. */
export const MAX_PAGE = 500;

/** A new record id: sortable by time, unique across isolates. */
export function recordId(time: number): string {
  const rand = crypto.getRandomValues(new Uint8Array(5));
  let tail = "";
  for (const b of rand) tail += b.toString(16).padStart(2, "0");
  return `${time.toString(36).padStart(9, "0")}-${tail}`;
}

/** An open store. Methods are synchronous (SQLite); callers keep batches small. */
export class TrackingStore {
  readonly file: string;
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly #insertField: StatementSync;
  readonly #insertKey: StatementSync;
  #closed = false;

  /** Opens (creating) the database in `dir`. Throws when it cannot be opened. */
  constructor(dir: string, options: { readOnly?: boolean } = {}) {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = `${dir}/${STORE_FILE}`;
    this.#db = new DatabaseSync(this.file, { readOnly: options.readOnly ?? false });
    // Other isolates write too: wait for their transaction (short) rather than fail at once.
    this.#db.exec("PRAGMA busy_timeout = 2000");
    if (!options.readOnly) {
      // Only takes effect on a new file: freed pages can then be given back (prune()).
      this.#db.exec("PRAGMA auto_vacuum = INCREMENTAL");
      this.#db.exec("PRAGMA journal_mode = WAL");
      this.#db.exec("PRAGMA synchronous = NORMAL");
      this.#db.exec(SCHEMA);
      try {
        Deno.chmodSync(this.file, 0o600);
      } catch {
        // Not the owner (a shared store): its directory is 0700 anyway.
      }
    }
    this.#insert = this.#db.prepare(
      `INSERT INTO messages (id, time, request_id, pipeline, endpoint, protocol, method, path,
        status, error_code, duration_ms, backends, metadata, stages, replay_of, actor, edited,
        content, key_id, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#insertKey = this.#db.prepare("INSERT INTO keys (created, wrapped) VALUES (?, ?)");
    this.#insertField = this.#db.prepare("INSERT INTO fields (seq, key, value) VALUES (?, ?, ?)");
  }

  /**
   * Writes `records` in one transaction (all or none); their content is sealed with `key`,
   * whose row is written first when it has none yet.
   */
  insert(records: readonly StoredRecord[], key?: BatchKey): void {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      let keyId = key?.id ?? null;
      if (key && keyId === null && records.some((r) => r.content)) {
        keyId = Number(this.#insertKey.run(key.created, key.wrapped).lastInsertRowid);
      }
      for (const r of records) {
        const metadata = JSON.stringify(r.metadata);
        const backends = JSON.stringify(r.backends);
        const result = this.#insert.run(
          r.id,
          r.time,
          r.request_id,
          r.pipeline,
          r.endpoint,
          r.protocol,
          r.method,
          r.path,
          r.status,
          r.error_code ?? null,
          r.duration_ms,
          backends,
          metadata,
          JSON.stringify(r.stages),
          r.replay_of ?? null,
          r.actor ?? null,
          r.edited ? 1 : 0,
          r.content ?? null,
          r.content ? keyId : null,
          metadata.length + backends.length + r.path.length + (r.content?.byteLength ?? 0) + 200,
        );
        const seq = result.lastInsertRowid;
        let n = 0;
        for (const key in r.metadata) {
          const value = r.metadata[key];
          if (value === "" || value.length > MAX_FIELD_VALUE) continue;
          if (++n > MAX_FIELDS) break;
          this.#insertField.run(seq, key, value);
        }
      }
      this.#db.exec("COMMIT");
      if (key && keyId !== null) key.id = keyId;
    } catch (err) {
      try {
        this.#db.exec("ROLLBACK");
      } catch {
        // The transaction is already gone (the error ended it).
      }
      throw err;
    }
  }

  /** A search page, newest first. Bad criteria are 400 `invalid_query`. */
  search(query: TrackingQuery): TrackingPage {
    const where: string[] = [];
    const args: (string | number)[] = [];
    const from = timeOf(query.from, "from");
    const to = timeOf(query.to, "to");
    if (from !== undefined) where.push("m.time >= ?"), args.push(from);
    if (to !== undefined) where.push("m.time < ?"), args.push(to);
    if (query.pipeline) where.push("m.pipeline = ?"), args.push(query.pipeline);
    if (query.endpoint) where.push("m.endpoint = ?"), args.push(query.endpoint);
    if (query.status) {
      const s = query.status.trim().toLowerCase();
      if (/^[1-5]\d\d$/.test(s)) where.push("m.status = ?"), args.push(Number(s));
      else if (/^[1-5]xx$/.test(s)) {
        const base = Number(s[0]) * 100;
        where.push("m.status >= ? AND m.status < ?"), args.push(base, base + 100);
      } else if (s === "error") where.push("m.status >= 400");
      else if (s === "ok") where.push("m.status < 400");
      else invalid("status is a code (404), a class (4xx), `error` or `ok`");
    }
    for (const [key, value] of Object.entries(query.fields ?? {})) {
      if (key.length > 128 || value.length > MAX_FIELD_VALUE) invalid(`field ${key}: too long`);
      const keys = aliasKeys(key);
      where.push(
        `m.seq IN (SELECT seq FROM fields WHERE key IN (${
          keys.map(() => "?").join(",")
        }) AND value = ?)`,
      );
      args.push(...keys, value);
    }
    if (query.cursor) {
      const c = /^(\d{1,16})\.(\d{1,16})$/.exec(query.cursor);
      if (!c) invalid("cursor is not one this API gave");
      where.push("(m.time < ? OR (m.time = ? AND m.seq < ?))");
      args.push(Number(c![1]), Number(c![1]), Number(c![2]));
    }
    const limit = query.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      invalid(`limit is 1-${MAX_PAGE}`);
    }
    const sql = `SELECT ${COLUMNS}, m.seq AS seq FROM messages m ${
      where.length ? `WHERE ${where.join(" AND ")}` : ""
    } ORDER BY m.time DESC, m.seq DESC LIMIT ?`;
    const rows = this.#db.prepare(sql).all(...args, limit + 1) as unknown as Row[];
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    return {
      messages: page.map(toMessage),
      next_cursor: more && last ? `${last.time}.${last.seq}` : null,
    };
  }

  /** One message, its sealed content and the wrapped key that seals it, or undefined. */
  get(
    id: string,
  ): { message: TrackedMessage; content: Uint8Array | null; key: Uint8Array | null } | undefined {
    const row = this.#db.prepare(`SELECT ${COLUMNS}, m.content AS content, k.wrapped AS wrapped
      FROM messages m LEFT JOIN keys k ON k.id = m.key_id WHERE m.id = ?`).get(id) as unknown as
      | (Row & { content: Uint8Array | null; wrapped: Uint8Array | null })
      | undefined;
    return row ? { message: toMessage(row), content: row.content, key: row.wrapped } : undefined;
  }

  /**
   * Retention: deletes records older than `before` (ms), then the oldest until the records'
   * sizes sum to at most `maxBytes`. Returns how many went.
   */
  prune(before: number, maxBytes: number): number {
    let removed = 0;
    const old = this.#db.prepare("SELECT max(seq) AS seq FROM messages WHERE time < ?")
      .get(before) as { seq: number | null };
    if (old.seq !== null) removed += this.#deleteUpTo(old.seq);
    const total = (this.#db.prepare("SELECT coalesce(sum(size), 0) AS n FROM messages").get() as {
      n: number;
    }).n;
    if (total > maxBytes) {
      // Walk from the oldest until enough is freed (to 90% of the cap, so it is not every pass).
      let excess = total - Math.floor(maxBytes * 0.9);
      let upTo: number | null = null;
      for (
        const row of this.#db.prepare("SELECT seq, size FROM messages ORDER BY seq")
          .iterate() as Iterable<{ seq: number; size: number }>
      ) {
        upTo = row.seq;
        excess -= row.size;
        if (excess <= 0) break;
      }
      if (upTo !== null) removed += this.#deleteUpTo(upTo);
    }
    if (removed > 0) {
      // Give freed pages back to the file system now and then, and keep the WAL short.
      this.#db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      this.#db.exec("PRAGMA incremental_vacuum");
    }
    return removed;
  }

  #deleteUpTo(seq: number): number {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const r = this.#db.prepare("DELETE FROM messages WHERE seq <= ?").run(seq);
      this.#db.prepare("DELETE FROM fields WHERE seq <= ?").run(seq);
      // Keys no record uses any more go with them, once no isolate may still seal with them.
      this.#db.prepare(
        `DELETE FROM keys WHERE created < ? AND id NOT IN (SELECT DISTINCT key_id FROM messages
          WHERE key_id IS NOT NULL)`,
      ).run(Date.now() - 2 * CONTENT_KEY_MAX_AGE_MS);
      this.#db.exec("COMMIT");
      return Number(r.changes);
    } catch (err) {
      this.#db.exec("ROLLBACK");
      throw err;
    }
  }

  /** Records, their summed sizes, the oldest record's time. */
  counts(): { records: number; bytes: number; oldest: number | null } {
    const r = this.#db.prepare(
      "SELECT count(*) AS n, coalesce(sum(size), 0) AS b, min(time) AS t FROM messages",
    ).get() as { n: number; b: number; t: number | null };
    return { records: r.n, bytes: r.b, oldest: r.t };
  }

  /** SQLite's own check of the file (used by tests after a kill). */
  integrity(): string {
    return (this.#db.prepare("PRAGMA integrity_check").get() as { integrity_check: string })
      .integrity_check;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}

const COLUMNS = `m.id, m.time, m.request_id, m.pipeline, m.endpoint, m.protocol, m.method,
  m.path, m.status, m.error_code, m.duration_ms, m.backends, m.metadata, m.stages, m.replay_of,
  m.actor, m.edited`;

interface Row {
  seq: number;
  id: string;
  time: number;
  request_id: string;
  pipeline: string;
  endpoint: string;
  protocol: string;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  duration_ms: number;
  backends: string;
  metadata: string;
  stages: string;
  replay_of: string | null;
  actor: string | null;
  edited: number;
}

function toMessage(r: Row): TrackedMessage {
  return {
    id: r.id,
    request_id: r.request_id,
    time: new Date(r.time).toISOString(),
    pipeline: r.pipeline,
    endpoint: r.endpoint,
    protocol: r.protocol,
    method: r.method,
    path: r.path,
    status: r.status,
    ...(r.error_code ? { error_code: r.error_code } : {}),
    duration_ms: r.duration_ms,
    backends: JSON.parse(r.backends),
    metadata: JSON.parse(r.metadata),
    stages: JSON.parse(r.stages),
    ...(r.replay_of ? { replay_of: r.replay_of } : {}),
    ...(r.actor ? { actor: r.actor } : {}),
    ...(r.edited ? { edited: true } : {}),
  };
}

function invalid(message: string): never {
  throw new GatewayError(400, "invalid_query", message);
}

function timeOf(value: string | number | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = typeof value === "number"
    ? value
    : /^\d+$/.test(value)
    ? Number(value)
    : Date.parse(value);
  if (!Number.isFinite(ms)) invalid(`${name} is an ISO 8601 time or epoch milliseconds`);
  return ms;
}
