/**
 * The `Location` of a stored object: the URL path under which a GET through the same endpoint
 * reads it back. When `read_pattern` is `{path}` with optional literal text around it
 * (`{path}`, `archive/{path}`, `{path}.json`), the stored path is mapped back through it; in
 * every other case the Location is the stored path itself under the endpoint.
 */
import { encodePath } from "./path_rules.ts";
import type { PathTemplate } from "./template.ts";

/** How stored paths map back to request paths. */
export interface LocationRule {
  /** Literal text before `{path}` in read_pattern. */
  before: string;
  /** Literal text after `{path}` in read_pattern. */
  after: string;
}

/** The inverse of a read template, or undefined when it is not `<text>{path}<text>`. */
export function locationRule(read: PathTemplate | undefined): LocationRule | undefined {
  if (!read) return undefined;
  const parts = read.parts;
  const at = parts.findIndex((p) => "name" in p);
  if (at === -1 || parts.filter((p) => "name" in p).length !== 1) return undefined;
  const placeholder = parts[at];
  if (!("name" in placeholder) || placeholder.name !== "path") return undefined;
  const text = (i: number) => {
    const p = parts[i];
    return p && "literal" in p ? p.literal : "";
  };
  return { before: text(at - 1), after: text(at + 1) };
}

/** The request path below the endpoint that reads `stored` back (percent-encoded, no `/`). */
export function requestPathFor(stored: string, rule: LocationRule | undefined): string {
  if (
    rule && stored.length > rule.before.length + rule.after.length &&
    stored.startsWith(rule.before) && stored.endsWith(rule.after)
  ) {
    return encodePath(stored.slice(rule.before.length, stored.length - rule.after.length));
  }
  return encodePath(stored);
}

/** The endpoint's path prefix as the request used it (`/files` for `/files/a/b`). */
export function endpointPrefix(originalPath: string, path: string): string {
  if (path === "/" || path === "") return originalPath.replace(/\/+$/, "");
  if (originalPath.endsWith(path)) return originalPath.slice(0, originalPath.length - path.length);
  return "";
}

/** The full Location: endpoint prefix, `/`, request path. */
export function locationOf(
  stored: string,
  rule: LocationRule | undefined,
  originalPath: string,
  path: string,
): string {
  return `${endpointPrefix(originalPath, path)}/${requestPathFor(stored, rule)}`;
}
