/**
 * Visits every key of a raw (parsed, not yet validated) configuration document that the schema
 * describes, with its field spec, by walking the table of sections (tree.ts) and, for option
 * tables, the registry's component types. Used to find path-valued keys (`FieldSpec.path`) and
 * credentials (`FieldSpec.secret`) wherever they sit, including inside service options.
 *
 * @example
 * ```ts
 * import { visitFields } from "./field_walk.ts";
 * const secrets: string[] = [];
 * visitFields({ backends: { s3: { service: "storage", options: { secret_access_key: "x" } } } },
 *   (f) => { if (f.spec.secret) secrets.push(f.path); });
 * // secrets: ["backends.s3.options.secret_access_key"]
 * ```
 */
import { childPath, type FieldSpec, isTable } from "./fields.ts";
import { CONFIG_TABLES, tablesAt } from "./tree.ts";

/** One described key and where it is. */
export interface FieldVisit {
  /** Dotted path, e.g. `backends.archive.options.root`. */
  path: string;
  /** The key in its table. */
  key: string;
  /** The table holding it (to read or replace the value). */
  holder: Record<string, unknown>;
  spec: FieldSpec;
  value: unknown;
}

/** Calls `visit` for every key of `doc` that the schema describes. */
export function visitFields(doc: Record<string, unknown>, visit: (f: FieldVisit) => void): void {
  for (const described of CONFIG_TABLES) {
    for (const { table: holder, path, spec } of tablesAt(doc, described)) {
      if (!spec) continue;
      for (const [key, value] of Object.entries(holder)) {
        const f = Object.hasOwn(spec, key) ? spec[key] : undefined;
        if (f) visit({ path: childPath(path, key), key, holder, spec: f, value });
      }
      for (const [sub, each] of Object.entries(described.eachKey ?? {})) {
        const inner = holder[sub];
        if (!isTable(inner)) continue;
        for (const [key, value] of Object.entries(inner)) {
          visit({
            path: childPath(childPath(path, sub), key),
            key,
            holder: inner,
            spec: each,
            value,
          });
        }
      }
    }
  }
}
