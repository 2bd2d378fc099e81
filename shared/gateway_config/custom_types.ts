/**
 * Middleware types and backend services that a program embedding the gateway added (through the
 * top-level `mod.ts`), beside the built-in ones of components/. They enter the one registry
 * (registry.ts) that every reader of an options schema walks (the validator, the writer, the
 * secret walk, the reference, the cloud's forms), so a registered type is validated, written back
 * and scanned for secrets exactly like a built-in one. `declaredOptions` turns a plain declaration
 * of keys into the field specs the registry holds.
 *
 * The registry is per process: a type registered before a gateway starts (or before a reload)
 * is known to every config that process loads.
 */
import { z } from "zod";
import { field, type FieldSpec, type TableSpec } from "./fields.ts";
import type { BackendOwner, OptionSchema } from "./component_type.ts";
import {
  componentNames,
  optionSchemaOf,
  registerComponentType,
  unregisterComponentType,
} from "./registry.ts";

/** The two kinds of type a program may add. */
export type CustomTypeKind = "middleware" | "backend";

/**
 * Adds a middleware type or backend service to what configs may name, through the registry's
 * one registration path (registry.ts), as the built-in types are. Throws when the name is
 * malformed, is a built-in type, or was registered before (a second module must not silently
 * replace the first one's schema).
 */
export function registerCustomConfigType(
  kind: CustomTypeKind,
  name: string,
  schema: OptionSchema<BackendOwner>,
): void {
  if (kind !== "middleware" && kind !== "backend") {
    throw new Error(`a program may add middleware or backend types, not ${JSON.stringify(kind)}`);
  }
  registerComponentType({ ...schema, kind, name });
}

/** Removes a registered type (tests, or a program that unloads an extension). */
export function unregisterCustomConfigType(kind: CustomTypeKind, name: string): boolean {
  return unregisterComponentType(kind, name);
}

/** The options schema of a middleware type, built-in or registered; undefined when unknown. */
export function middlewareOptionSchema(type: unknown): OptionSchema | undefined {
  return optionSchemaOf("middleware", type) as OptionSchema | undefined;
}

/** The options schema of a backend service, built-in or registered; undefined when unknown. */
export function backendOptionSchema(service: unknown): OptionSchema<BackendOwner> | undefined {
  return optionSchemaOf("backend", service);
}

/** Every middleware type a config may name: the built-in ones, then the registered ones. */
export function knownMiddlewareTypes(): string[] {
  return componentNames("middleware");
}

/** Every backend service a config may name: the built-in ones, then the registered ones. */
export function knownBackendServices(): string[] {
  return componentNames("backend");
}

/** Value kinds an option of a custom type may have, as the TOML file writes them. */
export type OptionKind = "string" | "integer" | "number" | "boolean" | "string[]" | "table";

/**
 * One key of a custom type's `options` table, declared without a schema library: the gateway
 * checks it with the same messages (expected, found, did-you-mean) as its own keys.
 */
export interface OptionDeclaration {
  /** What the value is: `string[]` is an array of strings, `table` a table of strings. */
  type: OptionKind;
  /** One sentence saying what the key does. */
  doc?: string;
  /** The key must be written. */
  required?: boolean;
  /** Applied when the key is absent (and left out by the writer when the value equals it). */
  default?: string | number | boolean | string[];
  /** `string` and `string[]`: the allowed values. */
  values?: readonly string[];
  /** Numbers: the smallest value; strings: the shortest length; `string[]`: the fewest items. */
  min?: number;
  /** Numbers: the largest value; strings: the longest length; `string[]`: the most items. */
  max?: number;
  /** `string` and `string[]`: a pattern each string must match. */
  pattern?: RegExp;
  /** A credential: never uploaded to the cloud, refused there when written literally. */
  secret?: boolean;
  /** The value names a file on the gateway host, relative to the main config file's directory. */
  path?: boolean;
}

/** The largest string an option of a custom type takes unless it says otherwise (64 KiB). */
const MAX_OPTION_STRING = 65_536;

/** Turns declared options into the table spec the validator, the writer and the docs read. */
export function declaredOptions(declarations: Record<string, OptionDeclaration>): TableSpec {
  const out: TableSpec = {};
  for (const [key, declaration] of Object.entries(declarations)) {
    out[key] = declaredField(key, declaration);
  }
  return out;
}

function declaredField(key: string, d: OptionDeclaration): FieldSpec {
  const string = (): z.ZodType => {
    // Named values keep the validator's "expected one of ..., found ..., did you mean" message.
    if (d.values?.length) return z.enum(d.values as [string, ...string[]]);
    let s = z.string().min(d.type === "string" ? d.min ?? 1 : 1);
    s = s.max(d.type === "string" ? d.max ?? MAX_OPTION_STRING : MAX_OPTION_STRING);
    return d.pattern ? s.regex(d.pattern, `must match ${d.pattern}`) : s;
  };
  const bounded = (n: z.ZodNumber) => {
    if (d.min !== undefined) n = n.min(d.min);
    return d.max !== undefined ? n.max(d.max) : n;
  };
  let schema: z.ZodType;
  switch (d.type) {
    case "string":
      schema = string();
      break;
    case "integer":
      schema = bounded(z.int());
      break;
    case "number":
      schema = bounded(z.number());
      break;
    case "boolean":
      schema = z.boolean();
      break;
    case "string[]": {
      let a = z.array(string());
      if (d.min !== undefined) a = a.min(d.min);
      schema = a.max(d.max ?? 1_000);
      break;
    }
    case "table":
      schema = z.record(z.string(), z.string().max(MAX_OPTION_STRING));
      break;
    default:
      throw new Error(`option \`${key}\`: unknown type ${JSON.stringify(d.type)}`);
  }
  const label = d.type === "string[]"
    ? "array of strings"
    : d.type === "table"
    ? "table of strings"
    : d.type;
  return field(label, schema, d.doc ?? "", {
    required: d.required,
    default: d.default,
    secret: d.secret,
    path: d.path ? "config" : undefined,
  });
}
