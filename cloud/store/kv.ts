/** Opening the KV database: a local file under the data directory, or a remote KV Connect URL. */
import { join } from "node:path";

/** Where the state lives. */
export interface KvLocation {
  dataDir: string;
  /** A KV Connect URL (`https://…`); the access token comes from `DENO_KV_ACCESS_TOKEN`. */
  kvUrl?: string;
}

/** Name of the local KV file inside the data directory. */
export const KV_FILE = "cloud.sqlite";

/**
 * Opens the KV database, creating the data directory when needed. The directory is made 0700
 * and the database files (with SQLite's `-wal` and `-shm`) 0600: they hold users, password
 * hashes and the (encrypted) signing keys, and are nobody else's to read.
 */
export async function openKv(location: KvLocation): Promise<Deno.Kv> {
  if (location.kvUrl) return await Deno.openKv(location.kvUrl);
  await Deno.mkdir(location.dataDir, { recursive: true, mode: 0o700 });
  const file = join(location.dataDir, KV_FILE);
  // Created 0600 before SQLite opens it, so it is never readable by others, even briefly.
  await Deno.writeFile(file, new Uint8Array(), { append: true, mode: 0o600 });
  const kv = await Deno.openKv(file);
  await restrictKvFiles(location);
  return kv;
}

/**
 * Makes the data directory 0700 and the database files 0600 (again: SQLite creates its `-wal`
 * and `-shm` files with the process umask when it first writes). Call after the first write.
 */
export async function restrictKvFiles(location: KvLocation): Promise<void> {
  if (location.kvUrl || Deno.build.os === "windows") return;
  const file = join(location.dataDir, KV_FILE);
  await Deno.chmod(location.dataDir, 0o700);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    await Deno.chmod(f, 0o600).catch(() => {});
  }
}

/** One page of a list and the cursor of the next (absent on the last page). */
export interface Page<T> {
  items: T[];
  next_cursor?: string;
}

/** Options of {@link listPage}. */
export interface PageOptions<T> {
  limit: number;
  cursor?: string;
  reverse?: boolean;
  /** Entries failing the filter are skipped (they do not count against `limit`). */
  filter?: (value: T) => boolean | Promise<boolean>;
}

/** Lists up to `limit` values under `prefix`, continuing at `cursor`. */
export function listPage<T>(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  options: PageOptions<T>,
): Promise<Page<T>> {
  const filter = options.filter;
  return listPageMapped<T, T>(kv, prefix, {
    ...options,
    map: filter ? async (e) => (await filter(e.value)) ? e.value : null : (e) => e.value,
  });
}

/**
 * Lists up to `limit` entries under `prefix` turned into items by `map` (null skips the entry
 * without counting it against `limit`), continuing at `cursor`.
 */
export async function listPageMapped<T, U>(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  options: {
    limit: number;
    cursor?: string;
    reverse?: boolean;
    map: (entry: Deno.KvEntry<T>) => U | null | Promise<U | null>;
  },
): Promise<Page<U>> {
  const iter = kv.list<T>({ prefix }, {
    cursor: options.cursor || undefined,
    reverse: options.reverse,
    batchSize: Math.min(options.limit + 1, 1000),
  });
  const items: U[] = [];
  // The cursor after the entry that filled the page: read from the iterator once, not per entry
  // (encoding a cursor costs more than reading the entry).
  let cursor: string | undefined;
  try {
    for await (const entry of iter) {
      if (items.length === options.limit) return { items, next_cursor: cursor };
      const item = await options.map(entry);
      if (item !== null) items.push(item);
      if (items.length === options.limit) cursor = iter.cursor;
    }
  } catch (err) {
    if (err instanceof TypeError && options.cursor) throw new BadCursorError();
    throw err;
  }
  return { items };
}

/** A list cursor that is not one this service handed out. */
export class BadCursorError extends Error {
  constructor() {
    super("invalid cursor: pass the next_cursor of a previous page unchanged");
    this.name = "BadCursorError";
  }
}

/** The values under `prefix` (byte chunks in key order) joined into one array, or null if none. */
export async function readChunks(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Uint8Array | null> {
  const parts: Uint8Array[] = [];
  for await (const e of kv.list<Uint8Array>({ prefix })) parts.push(e.value);
  if (!parts.length) return null;
  const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  return all;
}
