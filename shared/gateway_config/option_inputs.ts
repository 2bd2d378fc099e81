/**
 * The option schema of a component type as inputs of a form and as a JSON Schema, derived from
 * the registry (registry.ts): the cloud's option forms draw these inputs, its MCP tools describe
 * options with the JSON Schema, and `optionsFromInputs` turns what a form posted back into the
 * options table the JSON path would have produced (empty inputs are left out, so defaults apply).
 *
 * @example
 * ```ts
 * import { optionInputs, optionsFromInputs } from "./option_inputs.ts";
 * const inputs = optionInputs("endpoint", "dicom_scp")!;
 * const posted: Record<string, string[]> = { local_aet: ["GATEWAY"], port: ["104"] };
 * const { options } = optionsFromInputs(inputs, (key) => posted[key] ?? []);
 * console.log(options); // { local_aet: "GATEWAY", port: 104 }
 * ```
 */
import { z } from "zod";
import type { ComponentKind } from "./component_type.ts";
import type { FieldSpec, TableSpec } from "./fields.ts";
import { optionSchemaOf } from "./registry.ts";

/** How an option is edited. */
export type OptionControl =
  /** A line of text. */
  | "text"
  /** A credential: the name of an environment variable, written as `${NAME}`. */
  | "secret"
  /** A whole number. */
  | "integer"
  /** A number. */
  | "number"
  /** Yes, no, or the default. */
  | "boolean"
  /** One of `choices`. */
  | "select"
  /** Any of `choices` (an array of named values). */
  | "choices"
  /** An array of strings, one per line. */
  | "lines"
  /** A table, as JSON. */
  | "json";

/** One option of a type, as a form draws it. */
export interface OptionInput {
  /** The options key. */
  key: string;
  /** How it is edited. */
  control: OptionControl;
  /** The type as the reference names it (`string`, `array of strings`, ...). */
  type: string;
  /** The reference's sentence, with when it is required and its default. */
  help: string;
  /** The key must be written. */
  required: boolean;
  /** The values of `select` and `choices`. */
  choices?: readonly string[];
  /** The value applied when the key is left out. */
  default?: unknown;
  /** An example value, as the input shows it. */
  placeholder?: string;
}

/** A value a JSON Schema of zod describes (the parts the inputs read). */
interface JsonSchema {
  type?: string;
  enum?: unknown[];
  items?: JsonSchema;
  [key: string]: unknown;
}

/** The JSON Schema of one option (its doc as the description). */
export function optionFieldJsonSchema(f: FieldSpec): JsonSchema {
  const schema = z.toJSONSchema(f.schema, { unrepresentable: "any", io: "input" }) as JsonSchema;
  delete schema.$schema;
  const secret = f.secret
    ? " A credential: write an environment reference such as ${NAME}, never the value."
    : "";
  const out: JsonSchema = { ...schema, description: f.doc + secret };
  if (f.default !== undefined) out.default = f.default;
  if (f.example !== undefined) out.examples = [f.example];
  return out;
}

/**
 * The JSON Schema of the options table of type `name` of `kind`: its keys, types, enums and
 * required keys; any object when the type takes any options; undefined when it is unknown.
 */
export function optionJsonSchema(
  kind: ComponentKind,
  name: string,
  omit: readonly string[] = [],
): JsonSchema | undefined {
  const schema = optionSchemaOf(kind, name);
  if (!schema) return undefined;
  if (!schema.fields) return { type: "object", description: schema.doc };
  const fields = kept(schema.fields, omit);
  return {
    type: "object",
    description: schema.doc,
    properties: Object.fromEntries(fields.map(([k, f]) => [k, optionFieldJsonSchema(f)])),
    required: fields.filter(([, f]) => f.required).map(([k]) => k),
    additionalProperties: false,
  };
}

/**
 * The inputs of the options of type `name` of `kind`, in schema order, without the keys in
 * `omit` (those another field of the form sets); undefined when the type is unknown or takes any
 * options table (then only JSON describes them).
 */
export function optionInputs(
  kind: ComponentKind,
  name: string,
  omit: readonly string[] = [],
): OptionInput[] | undefined {
  const fields = optionSchemaOf(kind, name)?.fields;
  if (!fields) return undefined;
  return kept(fields, omit).map(([key, f]) => optionInput(key, f));
}

function kept(fields: TableSpec, omit: readonly string[]): [string, FieldSpec][] {
  return Object.entries(fields).filter(([k]) => !omit.includes(k));
}

/** One option as an input. */
export function optionInput(key: string, f: FieldSpec): OptionInput {
  const json = optionFieldJsonSchema(f);
  const enumOf = (s: JsonSchema | undefined) =>
    s?.type === "string" && Array.isArray(s.enum) ? s.enum.map(String) : undefined;
  let control: OptionControl;
  let choices: string[] | undefined;
  if (json.type === "boolean") control = "boolean";
  else if (json.type === "integer") control = "integer";
  else if (json.type === "number") control = "number";
  else if (json.type === "string" && (choices = enumOf(json))) control = "select";
  else if (json.type === "string") control = f.secret ? "secret" : "text";
  else if (json.type === "array" && (choices = enumOf(json.items))) control = "choices";
  else if (json.type === "array" && json.items?.type === "string") control = "lines";
  else control = "json";
  const when = f.required
    ? " Required."
    : f.requiredWhen
    ? ` Required when ${f.requiredWhen}.`
    : "";
  const fallback = f.default !== undefined
    ? ` Default: ${JSON.stringify(f.default)}.`
    : f.defaultDoc
    ? ` Default: ${f.defaultDoc}.`
    : "";
  const secret = f.secret
    ? " A credential: give the name of an environment variable of the gateway; the cloud " +
      "stores only the reference."
    : "";
  const out: OptionInput = {
    key,
    control,
    type: f.type,
    help: `${f.doc}${when}${fallback}${secret}`,
    required: f.required === true,
  };
  if (choices) out.choices = choices;
  if (f.default !== undefined) out.default = f.default;
  if (f.example !== undefined) out.placeholder = inputText(out, f.example);
  return out;
}

/** An environment reference `${NAME}`, alone. */
const REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
/** A bare environment variable name. */
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How `value` (an option's value) reads in its input; `""` for no value. */
export function inputText(input: OptionInput, value: unknown): string {
  if (value === undefined || value === null) return "";
  switch (input.control) {
    case "secret":
      return typeof value === "string" ? value.match(REFERENCE)?.[1] ?? value : String(value);
    case "lines":
    case "choices":
      return Array.isArray(value) ? value.map(String).join("\n") : String(value);
    case "json":
      return JSON.stringify(value, null, 2);
    default:
      return String(value);
  }
}

/** A problem of a posted input, at its options key. */
export interface InputProblem {
  /** The options key. */
  key: string;
  /** What is wrong. */
  message: string;
}

/**
 * The options table `inputs` describe, from what a form posted (`read(key)`: the values posted
 * for that key, empty when none). An empty input is left out, so the gateway applies its default;
 * what remains is checked by the validator afterwards, as a JSON-written table is.
 */
export function optionsFromInputs(
  inputs: readonly OptionInput[],
  read: (key: string) => string[],
): { options: Record<string, unknown>; problems: InputProblem[] } {
  const options: Record<string, unknown> = {};
  const problems: InputProblem[] = [];
  for (const input of inputs) {
    const values = read(input.key);
    if (input.control === "choices") {
      const chosen = values.filter((v) => v !== "");
      if (chosen.length) options[input.key] = chosen;
      continue;
    }
    const text = (values[0] ?? "").trim();
    if (text === "") continue;
    switch (input.control) {
      case "secret":
        options[input.key] = VARIABLE.test(text) ? `\${${text}}` : text;
        break;
      case "integer":
      case "number":
        if (Number.isFinite(Number(text))) options[input.key] = Number(text);
        else problems.push({ key: input.key, message: "must be a number" });
        break;
      case "boolean":
        options[input.key] = text === "true";
        break;
      case "lines":
        options[input.key] = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
        break;
      case "json":
        try {
          options[input.key] = JSON.parse(text);
        } catch (err) {
          problems.push({
            key: input.key,
            message: `not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
          });
        }
        break;
      default:
        options[input.key] = text;
    }
  }
  return { options, problems };
}
