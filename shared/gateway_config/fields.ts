/**
 * The table-checking engine: a table is described by FieldSpecs (a zod schema for the value plus
 * what docs and the writer need: type label, default, description, example), and `checkTable`
 * turns a raw TOML table into a defaults-applied record while reporting every problem.
 */
import { z } from "zod";
import type { KeyPosition, KeyPositions } from "./parse.ts";
import { didYouMean } from "./suggest.ts";
import type { ConfigProblem } from "./types.ts";

/** One key of a table. */
export interface FieldSpec {
  /** Checks (and may normalize) the value as parsed from TOML. */
  schema: z.ZodType;
  /** Type as users read it: `string`, `integer`, `number`, `boolean`, `array of strings`, ... */
  type: string;
  /** One sentence for the configuration reference. */
  doc: string;
  required?: boolean;
  /** When the key is required only sometimes (docs), e.g. "when `root` is `s3://`". */
  requiredWhen?: string;
  /** Applied when the key is absent; also omitted by the writer when the value equals it. */
  default?: unknown;
  /** Describes a default computed from other keys (docs), e.g. "the network's `port`". */
  defaultDoc?: string;
  /** A value for the reference's example column. */
  example?: unknown;
  /**
   * The value names a file or directory on the gateway host: `config` relative to the main config
   * file's directory, `state` (what the gateway writes and keeps) relative to `GATEWAY_STATE_DIR`
   * when it is set and else the same directory, `transforms` relative to `transforms_path`. A
   * configuration pushed from the cloud may only name paths inside `[cloud] data_dir`
   * (gateway/config/pushed_policy.ts).
   */
  path?: "config" | "state" | "transforms";
  /**
   * The value is a credential: it is never uploaded (the gateway sends `${VAR}` or `<redacted>`
   * instead) and the cloud refuses to store it literally.
   */
  secret?: boolean;
}

/** The keys of one table, in the order the writer and the docs list them. */
export type TableSpec = Record<string, FieldSpec>;

/** Problems found so far, located through the key-position index. */
export class ProblemSink {
  readonly problems: ConfigProblem[] = [];
  #positions: KeyPositions;
  #file: string;

  constructor(positions: KeyPositions, file: string) {
    this.#positions = positions;
    this.#file = file;
  }

  /** Records a problem at `path`; the line is the nearest written ancestor's. */
  report(path: string, message: string): void {
    const at = this.locate(path);
    this.problems.push(
      at ? { file: at.file, line: at.line, path, message } : { file: this.#file, path, message },
    );
  }

  /** True when `path` itself was written in the text (not only an ancestor). */
  written(path: string): boolean {
    return this.#positions.has(path);
  }

  /** Where `path` or, failing that, its closest written ancestor is. */
  locate(path: string): KeyPosition | undefined {
    for (let p = path; p !== "";) {
      const hit = this.#positions.get(p);
      if (hit) return hit;
      p = p.slice(0, Math.max(p.lastIndexOf("."), p.lastIndexOf("["), 0));
    }
    return undefined;
  }
}

/** Builds a FieldSpec. */
export function field(
  type: string,
  schema: z.ZodType,
  doc: string,
  extra: Omit<FieldSpec, "type" | "schema" | "doc"> = {},
): FieldSpec {
  return { type, schema, doc, ...extra };
}

/** Appends a key to a dotted path. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

/** True for a TOML table (a plain object, not an array or a date). */
export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    !(value instanceof Date);
}

/** `value` as a table; undefined becomes `{}`, anything else is reported and becomes `{}`. */
export function asTable(sink: ProblemSink, value: unknown, path: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (isTable(value)) return value;
  sink.report(path, `expected table, found ${describeValue(value)}`);
  return {};
}

/** Reports keys of `table` that are neither in `allowed` nor in `extra`. */
export function reportUnknownKeys(
  sink: ProblemSink,
  table: Record<string, unknown>,
  allowed: string[],
  path: string,
  what = "key",
): void {
  for (const key of Object.keys(table)) {
    if (allowed.includes(key)) continue;
    const hint = didYouMean(key, allowed) ||
      (allowed.length ? `; allowed: ${allowed.join(", ")}` : "; this table takes no keys");
    sink.report(childPath(path, key), `unknown ${what} \`${key}\`${hint}`);
  }
}

/**
 * Checks `raw` against `spec`: unknown keys (other than `subtables`, which the caller checks),
 * missing required keys, and each value. Returns the valid values with defaults applied.
 */
export function checkTable(
  sink: ProblemSink,
  raw: unknown,
  spec: TableSpec,
  path: string,
  subtables: string[] = [],
): Record<string, unknown> {
  const table = asTable(sink, raw, path);
  reportUnknownKeys(sink, table, [...Object.keys(spec), ...subtables], path);
  const out: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(spec)) {
    const keyPath = childPath(path, key);
    if (!Object.hasOwn(table, key)) {
      if (f.required) sink.report(keyPath, `missing required key \`${key}\` (${f.type})`);
      else if (f.default !== undefined) out[key] = structuredClone(f.default);
      continue;
    }
    const checked = checkValue(sink, table[key], f, keyPath);
    if (checked.ok) out[key] = checked.value;
  }
  return out;
}

/** Checks one value against its FieldSpec, reporting each zod issue at its own path. */
export function checkValue(
  sink: ProblemSink,
  value: unknown,
  f: FieldSpec,
  path: string,
): { ok: true; value: unknown } | { ok: false } {
  const result = f.schema.safeParse(value, {
    error: (issue) => issueMessage(issue as unknown as RawIssue, f.type),
  });
  if (result.success) return { ok: true, value: result.data };
  for (const issue of result.error.issues) {
    const at = issue.path.reduce<string>(
      (p, k) => childPath(p, typeof k === "number" ? k : String(k)),
      path,
    );
    sink.report(at, issue.message);
  }
  return { ok: false };
}

/** The parts of a zod issue the messages use. */
interface RawIssue {
  code: string;
  input?: unknown;
  path?: PropertyKey[];
  expected?: string;
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  values?: unknown[];
}

const ZOD_TYPE_LABELS: Record<string, string> = {
  int: "integer",
  number: "number",
  string: "string",
  boolean: "boolean",
  array: "array",
  object: "table",
  record: "table",
};

/** Messages in the form users of this config read best: what was expected, what was found. */
function issueMessage(issue: RawIssue, fieldType: string): string | undefined {
  const found = describeValue(issue.input);
  switch (issue.code) {
    case "invalid_type": {
      const expected = issue.path?.length
        ? ZOD_TYPE_LABELS[issue.expected ?? ""] ?? issue.expected
        : fieldType;
      return `expected ${expected}, found ${found}`;
    }
    case "too_small":
      if (issue.origin === "string") {
        return Number(issue.minimum) <= 1
          ? "must not be empty"
          : `must be at least ${issue.minimum} characters long`;
      }
      if (issue.origin === "array") {
        return Number(issue.minimum) <= 1
          ? "must list at least one item"
          : `must list at least ${issue.minimum} items`;
      }
      return issue.inclusive
        ? `must be at least ${issue.minimum}, found ${issue.input}`
        : `must be greater than ${issue.minimum}, found ${issue.input}`;
    case "too_big":
      if (issue.origin === "string") {
        return `must be at most ${issue.maximum} characters long, found ${found}`;
      }
      return `must be at most ${issue.maximum}, found ${issue.input}`;
    case "invalid_value": {
      const values = (issue.values ?? []).map(String);
      const hint = typeof issue.input === "string" ? didYouMean(issue.input, values) : "";
      return `expected one of ${values.map((v) => `"${v}"`).join(", ")}, found ${found}${hint}`;
    }
    default:
      return undefined;
  }
}

/** `string "80"`, `integer 80`, `float 8.5`, `boolean true`, `array`, `table`, `datetime`. */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case "string":
      return `string ${JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value)}`;
    case "number":
      return Number.isInteger(value) ? `integer ${value}` : `float ${value}`;
    case "bigint":
      return `integer ${value}`;
    case "boolean":
      return `boolean ${value}`;
    case "undefined":
      return "nothing";
  }
  if (Array.isArray(value)) return "array";
  if (value instanceof Date) return "datetime";
  return "table";
}
