/**
 * Routing under a prefix that can change at run time.
 *
 * Hono's router is built once, but `[management] prefix` may change on reload. So routes under the
 * prefix are registered under a fixed internal marker, and the app's `getPath` maps each request's
 * `/{prefix}/…` path onto that marker using the prefix of the config serving at that moment.
 */

/** Internal mount point of the prefixed routes; a request naming it verbatim never matches. */
export const PREFIXED = "/~prefixed";

const UNROUTABLE = "/~unroutable";

/** Paths served outside the prefix; they win even when the prefix is empty. */
export const ROOT_PATHS: ReadonlySet<string> = new Set([
  "/healthz",
  "/readyz",
  "/metrics",
  "/api/reload",
]);

/** A configured prefix without surrounding slashes (`/admin/` → `admin`; "" = at the root). */
export function normalizePrefix(prefix: string): string {
  return prefix.replace(/^\/+|\/+$/g, "");
}

/**
 * The path the router sees for a request path: `/{prefix}/x` → `/~prefixed/x`; root paths and
 * other paths unchanged. `prefix` is normalized; null means "no prefix is known" (all 404).
 */
export function routingPath(path: string, prefix: string | null): string {
  if (ROOT_PATHS.has(path)) return path;
  // Keep the internal marker private: `/~prefixed/info` must not bypass the prefix check.
  if (path === PREFIXED || path.startsWith(PREFIXED + "/")) return UNROUTABLE + path;
  if (prefix === null) return path;
  const base = prefix === "" ? "" : "/" + prefix;
  if (path.startsWith(base + "/")) return PREFIXED + path.slice(base.length);
  return path;
}

/** The path of a request URL, without query or fragment. */
export function pathOf(url: string): string {
  // Faster than `new URL()`: the URL of a served request is always absolute.
  const start = url.indexOf("/", url.indexOf("://") + 3);
  if (start === -1) return "/";
  let end = url.length;
  const q = url.indexOf("?", start);
  if (q !== -1) end = q;
  const h = url.indexOf("#", start);
  if (h !== -1 && h < end) end = h;
  return url.slice(start, end);
}

/** Allowed methods by routing path, from an app's registered routes (GET implies HEAD). */
export function allowedMethods(
  routes: readonly { method: string; path: string }[],
): Map<string, string[]> {
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    if (r.method === "ALL") continue;
    let set = byPath.get(r.path);
    if (!set) byPath.set(r.path, set = new Set());
    set.add(r.method);
    if (r.method === "GET") set.add("HEAD");
  }
  return new Map([...byPath].map(([path, set]) => [path, [...set]]));
}
