/**
 * Path templates: literal text with `{name}` placeholders. Built-in names are `uuid`,
 * `timestamp`, `timestamp_compact`, `date` and `path`; any other name is looked up in the
 * request metadata, then in the normalized body data (dotted paths reach into objects).
 */
import { GatewayError } from "../../errors.ts";
import { invalidPath, pathProblem } from "./path_rules.ts";

/** A literal piece or a placeholder of a template. */
export type TemplatePart = { literal: string } | { name: string };

/** Placeholders whose value the backend makes (never looked up in metadata or data). */
export const BUILT_IN_NAMES: ReadonlySet<string> = new Set([
  "uuid",
  "timestamp",
  "timestamp_compact",
  "date",
  "path",
]);

/** Placeholders that make a new value per request, meaningless for finding an existing object. */
export const GENERATED_NAMES: ReadonlySet<string> = new Set([
  "uuid",
  "timestamp",
  "timestamp_compact",
  "date",
]);

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** A parsed path template. */
export class PathTemplate {
  readonly source: string;
  readonly parts: readonly TemplatePart[];

  constructor(source: string, parts: TemplatePart[]) {
    this.source = source;
    this.parts = parts;
  }

  /** Names of the placeholders, in order. */
  get names(): string[] {
    return this.parts.flatMap((p) => "name" in p ? [p.name] : []);
  }

  /** True when some placeholder may need the body data (not built in). */
  needsLookup(): boolean {
    return this.names.some((n) => !BUILT_IN_NAMES.has(n));
  }
}

/**
 * Parse `source`. Throws an Error (a config problem) on unbalanced braces, bad placeholder names,
 * or literal text that could never form a valid relative path.
 */
export function parseTemplate(source: string, option: string): PathTemplate {
  const parts: TemplatePart[] = [];
  let i = 0;
  while (i < source.length) {
    const open = source.indexOf("{", i);
    const close = source.indexOf("}", i);
    if (close !== -1 && (open === -1 || close < open)) {
      throw new Error(`${option}: unmatched \`}\` at position ${close + 1} of "${source}"`);
    }
    if (open === -1) {
      parts.push({ literal: source.slice(i) });
      break;
    }
    if (open > i) parts.push({ literal: source.slice(i, open) });
    const end = source.indexOf("}", open);
    if (end === -1) throw new Error(`${option}: unclosed \`{\` in "${source}"`);
    const name = source.slice(open + 1, end);
    if (!NAME.test(name)) {
      throw new Error(
        `${option}: invalid placeholder {${name}} in "${source}" (letters, digits, _ . -)`,
      );
    }
    parts.push({ name });
    i = end + 1;
  }
  if (parts.length === 0) throw new Error(`${option}: the template is empty`);
  // With every placeholder standing for a harmless value, the literals must form a valid path.
  const sample = parts.map((p) => "name" in p ? "x" : p.literal).join("");
  const problem = pathProblem(sample);
  if (problem) throw new Error(`${option}: "${source}" ${problem}`);
  return new PathTemplate(source, parts);
}

/** What a template is resolved against. */
export interface TemplateInput {
  /** Request path below the endpoint (percent-decoded, leading `/` removed) for `{path}`. */
  path: string;
  metadata: Record<string, string>;
  /** The normalized body data, read only when a placeholder needs it. */
  data: () => Promise<unknown>;
  /** The instant of `{timestamp}` and `{date}` (one per request). */
  now: Date;
  /** The value of `{uuid}` (one per request). */
  uuid: string;
}

/** A 400 for a placeholder without a value. */
function missing(name: string, template: string): GatewayError {
  const why = name === "path"
    ? "the request path below the endpoint is empty"
    : "not in the request metadata nor the body data";
  return new GatewayError(
    400,
    "missing_path_value",
    `no value for {${name}} of storage template "${template}" (${why})`,
    { placeholder: name },
  );
}

/** `2025-01-31T09:15:02.123Z` -> `20250131T091502123Z`. */
function compact(iso: string): string {
  return iso.replace(/[-:.]/g, "");
}

/** The value at `name` in data: a top-level key first, then a dotted path. */
export function fieldValue(data: unknown, name: string): unknown {
  if (data === null || typeof data !== "object") return undefined;
  if (Object.hasOwn(data, name)) return (data as Record<string, unknown>)[name];
  if (!name.includes(".")) return undefined;
  let node: unknown = data;
  for (const key of name.split(".")) {
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A scalar field value as text; undefined for null/absent; 400 for objects and arrays. */
function scalarText(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "boolean" || typeof value === "bigint") return String(value);
  throw invalidPath(`body field {${name}} is not a string, number or boolean; refused`);
}

/**
 * Resolve a template to a relative path. Each substituted value is checked on its own (so a
 * value can never reach outside its place), then the whole path is checked: 400
 * `invalid_storage_path` on any problem, 400 `missing_path_value` for a placeholder with no value.
 */
export async function resolveTemplate(
  template: PathTemplate,
  input: TemplateInput,
): Promise<string> {
  let out = "";
  for (const part of template.parts) {
    if ("literal" in part) {
      out += part.literal;
      continue;
    }
    const value = await valueOf(part.name, input, template.source);
    checkValue(value, part.name);
    out += value;
  }
  const problem = pathProblem(out);
  if (problem) throw invalidPath(`storage path "${printable(out)}" ${problem}; refused`);
  return out;
}

async function valueOf(name: string, input: TemplateInput, source: string): Promise<string> {
  switch (name) {
    case "uuid":
      return input.uuid;
    case "timestamp":
      return input.now.toISOString();
    case "timestamp_compact":
      return compact(input.now.toISOString());
    case "date":
      return input.now.toISOString().slice(0, 10);
    case "path":
      if (input.path === "") throw missing(name, source);
      return input.path;
  }
  const fromMetadata = input.metadata[name];
  if (typeof fromMetadata === "string") return fromMetadata;
  const value = scalarText(fieldValue(await input.data(), name), name);
  if (value === undefined) throw missing(name, source);
  return value;
}

/** A substituted value may span segments (`a/b`) but every segment must be a valid one. */
function checkValue(value: string, name: string): void {
  const problem = pathProblem(value, true);
  if (problem) throw invalidPath(`value of {${name}} ("${printable(value)}") ${problem}; refused`);
}

/** A value safe to echo in a message: control characters shown as escapes, length bounded. */
function printable(value: string): string {
  // deno-lint-ignore no-control-regex
  const shown = value.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}`);
  return shown.length > 120 ? shown.slice(0, 120) + "…" : shown;
}
