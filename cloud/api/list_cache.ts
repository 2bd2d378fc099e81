/**
 * Rendered list pages, kept per team revision: a page of a team's own records (`GET /api/<kind>`)
 * depends only on those records, and every change of them moves the team's revision on in the
 * same atomic commit (store/repo.ts), so a page rendered at one revision is the answer to the same
 * query as long as the revision stays. Each request still reads the revision (one KV read) and is
 * authenticated and authorized as before; only the listing and the JSON serialization are saved
 * (a 1,000-record page is about 1,000 KV entries and 370 KB of JSON). Bounded in entries and
 * bytes, the oldest dropped first. Gateways are never cached (their status changes with time).
 */
import type { Services } from "../services.ts";

/** Most pages kept per service. */
export const LIST_CACHE_ENTRIES = 256;
/** Most bytes of JSON kept per service (UTF-16 length counted as bytes). */
export const LIST_CACHE_BYTES = 64 << 20;

interface Entry {
  rev: string;
  text: string;
}

/** The pages of one service. */
class ListCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  get(key: string, rev: string): string | undefined {
    const e = this.#entries.get(key);
    return e?.rev === rev ? e.text : undefined;
  }

  set(key: string, rev: string, text: string): void {
    this.#drop(key);
    if (text.length > LIST_CACHE_BYTES) return;
    while (
      this.#entries.size >= LIST_CACHE_ENTRIES || this.#bytes + text.length > LIST_CACHE_BYTES
    ) {
      this.#drop(this.#entries.keys().next().value!);
    }
    this.#entries.set(key, { rev, text });
    this.#bytes += text.length;
  }

  #drop(key: string): void {
    const e = this.#entries.get(key);
    if (!e) return;
    this.#entries.delete(key);
    this.#bytes -= e.text.length;
  }
}

const caches = new WeakMap<Services, ListCache>();

/**
 * The JSON text of a list page of team `teamId`: the one rendered for `key` (the kind and the
 * query) at the team's current revision, else `render()`'s, kept for the next request.
 */
export async function cachedPage(
  s: Services,
  teamId: string,
  key: string,
  render: () => Promise<unknown>,
): Promise<string> {
  let cache = caches.get(s);
  if (!cache) caches.set(s, cache = new ListCache());
  // Read before listing: what is kept under a revision is at least as new as it, and a change
  // committed after the read moves the revision on, so the next request does not use it.
  const rev = (await s.store.revision(teamId)).versionstamp ?? "0";
  const fullKey = `${teamId}\n${key}`;
  const hit = cache.get(fullKey, rev);
  if (hit !== undefined) return hit;
  const text = JSON.stringify(await render());
  cache.set(fullKey, rev, text);
  return text;
}
