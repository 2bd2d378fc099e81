/** The route table: HTTP-family endpoints by network and `path_prefix`, longest prefix first. */

/** A routed endpoint on one network. */
export interface Route<E> {
  prefix: string;
  endpoint: E;
}

/** Longest-prefix matching of paths to endpoints, per network. */
export class RouteTable<E> {
  readonly #byNetwork = new Map<string, Route<E>[]>();

  /** Add a route (conflicts are rejected by config validation before this). */
  add(network: string, prefix: string, endpoint: E): void {
    const routes = this.#byNetwork.get(network) ?? [];
    routes.push({ prefix: normalizePrefix(prefix), endpoint });
    routes.sort((a, b) => b.prefix.length - a.prefix.length);
    this.#byNetwork.set(network, routes);
  }

  /** The route whose prefix is the longest one that `path` is under, or undefined. */
  match(network: string, path: string): Route<E> | undefined {
    const routes = this.#byNetwork.get(network);
    if (!routes) return undefined;
    for (const r of routes) {
      const p = r.prefix;
      if (p === "/") return r;
      if (path.startsWith(p) && (path.length === p.length || path.charCodeAt(p.length) === 47)) {
        return r;
      }
    }
    return undefined;
  }

  /** All routes of a network, longest prefix first. */
  list(network: string): Route<E>[] {
    return this.#byNetwork.get(network) ?? [];
  }
}

/** `/a/b/` → `/a/b`; `` → `/`. */
export function normalizePrefix(prefix: string): string {
  let p = prefix.startsWith("/") ? prefix : "/" + prefix;
  while (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  return p;
}

/** The path below a prefix, always starting with `/`. */
export function relativePath(path: string, prefix: string): string {
  if (prefix === "/") return path || "/";
  const rest = path.slice(prefix.length);
  return rest === "" ? "/" : rest;
}
