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

/** Opens the KV database, creating the data directory when needed. */
export async function openKv(location: KvLocation): Promise<Deno.Kv> {
  if (location.kvUrl) return await Deno.openKv(location.kvUrl);
  await Deno.mkdir(location.dataDir, { recursive: true });
  return await Deno.openKv(join(location.dataDir, KV_FILE));
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
  filter?: (value: T) => boolean;
}

/** Lists up to `limit` values under `prefix`, continuing at `cursor`. */
export async function listPage<T>(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  options: PageOptions<T>,
): Promise<Page<T>> {
  const iter = kv.list<T>({ prefix }, {
    cursor: options.cursor || undefined,
    reverse: options.reverse,
    batchSize: Math.min(options.limit + 1, 1000),
  });
  const items: T[] = [];
  let cursor: string | undefined;
  try {
    for await (const entry of iter) {
      if (items.length === options.limit) return { items, next_cursor: cursor };
      cursor = iter.cursor;
      if (!options.filter || options.filter(entry.value)) items.push(entry.value);
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
