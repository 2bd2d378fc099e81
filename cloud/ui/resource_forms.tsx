/** @jsxImportSource hono/jsx */
/**
 * The forms of the resource kinds: which fields each kind's form has, how a field is drawn (with
 * its problems next to it), and how a posted form becomes the body the API takes. The body then
 * goes through the API's own schema and checks, so the UI says exactly what the API would.
 *
 * The options of endpoints, backends and middleware are drawn from the gateway's configuration
 * registry: one group of typed inputs per component type (enums as selects, credentials as
 * `${VAR}` fields, help from the schema), the group of the chosen type shown by the stylesheet
 * (OPTION_FORM_CSS). The options as JSON stay as the advanced alternative: when that text was
 * changed, it is what is saved; otherwise the typed inputs are.
 */
import type { FC } from "hono/jsx";
import {
  BACKEND_SERVICES,
  COMPONENT_KINDS,
  type ComponentKind,
  componentNames,
  componentTypes,
  ENDPOINT_SERVICES,
  inputText,
  LOAD_BALANCING,
  type OptionInput,
  optionInputs,
  optionsFromInputs,
} from "../../shared/gateway_config/mod.ts";
import type { ResourceKind } from "../store/mod.ts";

/** How a field is edited. */
export type FieldKind =
  | "text"
  | "textarea"
  | "number"
  | "select"
  | "checkboxes"
  | "ref"
  | "refs"
  | "bool"
  | "json"
  | "options";

/** One field of a kind's form. */
export interface FieldSpec {
  name: string;
  label: string;
  kind: FieldKind;
  help?: string;
  /** Choices of `select` and `checkboxes`. */
  options?: readonly string[];
  /** The kind a `ref`/`refs` field points at. */
  to?: ResourceKind;
  /** Empty means null (text, number, select, ref, bool, json). */
  nullable?: boolean;
  /** Only when creating (a gateway's code). */
  createOnly?: boolean;
  required?: boolean;
  placeholder?: string;
  /** Rows of a textarea or JSON field. */
  rows?: number;
  /** `options`: the kind of component whose type the form's `type` field names. */
  component?: ComponentKind;
  /** `options`: keys another field of the form sets (a transform's `spec_path`). */
  omit?: readonly string[];
}

const NAME: FieldSpec = {
  name: "name",
  label: "Name",
  kind: "text",
  required: true,
  help: "Letters, digits, _ and -; it becomes a table name in the gateway's TOML.",
};
const DESCRIPTION: FieldSpec = {
  name: "description",
  label: "Description",
  kind: "textarea",
  rows: 2,
};

/** The fields of each kind's form, in order. */
export const FORMS: Record<ResourceKind, FieldSpec[]> = {
  gateways: [
    {
      name: "code",
      label: "Code",
      kind: "text",
      required: true,
      createOnly: true,
      help: "How the gateway identifies itself when it authorizes; it never changes.",
      placeholder: "edge-berlin-1",
    },
    { name: "name", label: "Name", kind: "text", help: "Defaults to the code." },
    DESCRIPTION,
  ],
  services: [
    NAME,
    DESCRIPTION,
    {
      name: "endpoint_types",
      label: "Endpoint types",
      kind: "checkboxes",
      options: ENDPOINT_SERVICES,
    },
    {
      name: "backend_types",
      label: "Backend types",
      kind: "checkboxes",
      options: BACKEND_SERVICES,
    },
  ],
  endpoints: [
    NAME,
    DESCRIPTION,
    { name: "service_id", label: "Service", kind: "ref", to: "services", required: true },
    { name: "type", label: "Type", kind: "select", options: ENDPOINT_SERVICES, required: true },
    {
      name: "options",
      label: "Options",
      kind: "options",
      component: "endpoint",
      placeholder: '{ "path_prefix": "/fhir" }',
    },
    {
      name: "network_ids",
      label: "Networks",
      kind: "refs",
      to: "networks",
      help: "None ticked: every network of the gateway serves it. A dicom_scp or hl7 endpoint " +
        "listens on its own port (its options' bind_addr and port): tick none.",
    },
  ],
  backends: [
    NAME,
    DESCRIPTION,
    { name: "service_id", label: "Service", kind: "ref", to: "services", required: true },
    { name: "type", label: "Type", kind: "select", options: BACKEND_SERVICES, required: true },
    {
      name: "options",
      label: "Options",
      kind: "options",
      component: "backend",
      placeholder: '{ "base_url": "https://fhir.example.org/r4" }',
    },
    {
      name: "targets",
      label: "Targets (JSON list)",
      kind: "json",
      placeholder: '[{ "name": "a", "url": "https://a.example.org" }]',
      help: "Several targets are load balanced; leave [] to use options.base_url.",
    },
    { name: "timeout_secs", label: "Timeout (seconds)", kind: "number", nullable: true },
    { name: "retries", label: "Retries", kind: "number", nullable: true },
    {
      name: "load_balancing",
      label: "Load balancing",
      kind: "select",
      options: LOAD_BALANCING,
      nullable: true,
    },
    { name: "required", label: "Required", kind: "bool", nullable: true },
    {
      name: "match",
      label: "Match (JSON object)",
      kind: "json",
      nullable: true,
      placeholder: '{ "resourceType": "Patient" }',
    },
  ],
  middleware: [
    NAME,
    DESCRIPTION,
    {
      name: "type",
      label: "Type",
      kind: "select",
      // Read when the form is drawn: a type registered after start-up is listed too.
      get options() {
        return componentNames("middleware");
      },
      required: true,
    },
    {
      name: "transform_id",
      label: "Transform",
      kind: "ref",
      to: "transforms",
      nullable: true,
      help: "Needed by transform and metadata_transform middleware.",
    },
    {
      name: "options",
      label: "Options",
      kind: "options",
      component: "middleware",
      omit: ["spec_path"],
      placeholder: '{ "apply": "left" }',
    },
  ],
  transforms: [
    NAME,
    DESCRIPTION,
    {
      name: "spec",
      label: "JOLT spec (JSON list of operations)",
      kind: "json",
      rows: 14,
      placeholder: '[{ "operation": "shift", "spec": { "a": "b" } }]',
    },
  ],
  pipelines: [
    NAME,
    DESCRIPTION,
    { name: "gateway_id", label: "Gateway", kind: "ref", to: "gateways", nullable: true },
  ],
  networks: [
    NAME,
    DESCRIPTION,
    { name: "bind", label: "Bind address", kind: "text", placeholder: "0.0.0.0" },
    { name: "port", label: "Port", kind: "number" },
    { name: "tls_cert_path", label: "TLS certificate file", kind: "text", nullable: true },
    { name: "tls_key_path", label: "TLS key file", kind: "text", nullable: true },
    {
      name: "http3",
      label: "HTTP/3 (JSON object)",
      kind: "json",
      nullable: true,
      placeholder: '{ "port": 8443 }',
    },
    {
      name: "tunnel",
      label: "Tunnel (JSON object)",
      kind: "json",
      nullable: true,
      placeholder: '{ "provider": "cloudflare", "hostname": "gw.example.org" }',
    },
  ],
};

/** The fields of a form when creating or editing. */
export function fieldsOf(kind: ResourceKind, creating: boolean): FieldSpec[] {
  return FORMS[kind].filter((f) => creating || !f.createOnly);
}

/** Problems by top-level field name ("" for the record as a whole). */
export type FieldErrors = Map<string, string[]>;

/** Groups problems (`targets.0.url: …`) under their top-level field when the form has it. */
export function groupProblems(
  fields: FieldSpec[],
  problems: { field: string; message: string }[],
): FieldErrors {
  const out: FieldErrors = new Map();
  for (const p of problems) {
    const top = p.field.split(".")[0];
    const known = fields.some((f) => f.name === top);
    const key = known ? top : "";
    const text = known && p.field !== top
      ? `${p.field.slice(top.length + 1)}: ${p.message}`
      : p.field && !known
      ? `${p.field}: ${p.message}`
      : p.message;
    out.set(key, [...(out.get(key) ?? []), text]);
  }
  return out;
}

/** A parsed form: the body for the API, the raw texts to show again, and parse problems. */
export interface ParsedForm {
  body: Record<string, unknown>;
  raw: Record<string, string>;
  problems: { field: string; message: string }[];
}

/** Turns a posted form into an API body for `fields`. */
export function parseForm(fields: FieldSpec[], form: URLSearchParams): ParsedForm {
  const body: Record<string, unknown> = {};
  const raw: Record<string, string> = {};
  const problems: { field: string; message: string }[] = [];
  for (const f of fields) {
    const text = (form.get(f.name) ?? "").trim();
    // What cannot be rebuilt from the body (unparsed JSON and numbers) is shown again as typed.
    if (f.kind === "json" || f.kind === "number" || f.kind === "options") {
      raw[f.name] = form.get(f.name) ?? "";
    }
    if (f.kind === "options" && typedOptions(f, form, body, raw, problems)) continue;
    switch (f.kind) {
      case "text":
      case "textarea":
      case "select":
      case "ref":
        if (text === "" && f.nullable) body[f.name] = null;
        else if (text !== "" || f.kind === "textarea") body[f.name] = text;
        break;
      case "number":
        if (text === "") {
          if (f.nullable) body[f.name] = null;
        } else if (Number.isFinite(Number(text))) body[f.name] = Number(text);
        else problems.push({ field: f.name, message: "must be a number" });
        break;
      case "bool":
        body[f.name] = text === "" ? null : text === "true";
        break;
      case "checkboxes":
      case "refs":
        body[f.name] = form.getAll(f.name).filter((v) => v !== "");
        break;
      case "json":
      case "options":
        if (text === "") {
          if (f.nullable) body[f.name] = null;
          break;
        }
        try {
          body[f.name] = JSON.parse(text);
        } catch (err) {
          problems.push({
            field: f.name,
            message: `not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
          });
        }
        break;
    }
  }
  return { body, raw, problems };
}

/** The name of a typed option input: `options.<type>.<key>`. */
function inputName(f: FieldSpec, type: string, key: string): string {
  return `${f.name}.${type}.${key}`;
}

/** The typed inputs of `type` for an `options` field; undefined when only JSON describes them. */
function inputsOf(f: FieldSpec, type: string): OptionInput[] | undefined {
  const inputs = type === "" ? undefined : optionInputs(f.component!, type, f.omit);
  return inputs?.length ? inputs : undefined;
}

/**
 * Reads an `options` field from its typed inputs, unless the JSON text was changed from what the
 * form showed (or the form has no typed inputs for the type): true when it did.
 */
function typedOptions(
  f: FieldSpec,
  form: URLSearchParams,
  body: Record<string, unknown>,
  raw: Record<string, string>,
  problems: { field: string; message: string }[],
): boolean {
  const was = form.get(`${f.name}_was`);
  if (was === null) return false;
  raw[`${f.name}_was`] = was;
  const type = (form.get("type") ?? "").trim();
  const inputs = inputsOf(f, type);
  if (!inputs || (form.get(f.name) ?? "").trim() !== was.trim()) return false;
  for (const input of inputs) {
    const name = inputName(f, type, input.key);
    if (input.control !== "choices") raw[name] = form.get(name) ?? "";
  }
  const typed = optionsFromInputs(inputs, (key) => form.getAll(inputName(f, type, key)));
  body[f.name] = typed.options;
  for (const p of typed.problems) {
    problems.push({ field: `${f.name}.${p.key}`, message: p.message });
  }
  return true;
}

/**
 * Shows the typed inputs of the chosen type only (no script: `:has` reads the type select), one
 * rule per registered type name.
 */
export function optionFormCss(): string {
  const names = [...new Set(COMPONENT_KINDS.flatMap((k) => componentNames(k)))];
  const hidden = ".options-for { display: none; border-left: 3px solid var(--line); " +
    "padding-left: .8rem; }\n";
  return hidden + names.map((n) =>
    `form:has(select[name="type"] option[value="${n}"]:checked) ` +
    `.options-for[data-options-for="${n}"] { display: block; }`
  ).join("\n") + "\n.secret-ref { font-family: monospace; }\n";
}

/** The choices of `ref`/`refs` fields, by kind. */
export type RefChoices = Partial<Record<ResourceKind, { id: string; name: string }[]>>;

/** Text of a value in an input. */
function shown(f: FieldSpec, value: unknown, raw: string | undefined): string {
  if (raw !== undefined) return raw;
  if (value === null || value === undefined) return "";
  if (f.kind === "json") return JSON.stringify(value, null, 2);
  return String(value);
}

/** One field with its label, help and problems. */
export const Field: FC<{
  f: FieldSpec;
  value: unknown;
  raw?: string;
  errors?: string[];
  refs: RefChoices;
}> = ({ f, value, raw, errors, refs }) => {
  const id = `f-${f.name}`;
  const described = [f.help ? `${id}-help` : "", errors?.length ? `${id}-err` : ""]
    .filter(Boolean).join(" ") || undefined;
  const invalid = errors?.length ? "true" : undefined;
  const help = f.help && <p class="help" id={`${id}-help`}>{f.help}</p>;
  const problems = errors?.length
    ? (
      <div role="alert">
        <ul class="field-error" id={`${id}-err`}>
          {errors.map((e) => <li key={e}>{e}</li>)}
        </ul>
      </div>
    )
    : null;
  const text = shown(f, value, raw);
  if (f.kind === "checkboxes" || f.kind === "refs") {
    const chosen = new Set(Array.isArray(value) ? value.map(String) : []);
    const choices = f.kind === "refs"
      ? (refs[f.to!] ?? []).map((r) => ({ value: r.id, label: r.name }))
      : (f.options ?? []).map((o) => ({ value: o, label: o }));
    return (
      <fieldset class="field" aria-describedby={described} aria-invalid={invalid}>
        <legend>{f.label}</legend>
        {choices.length === 0 && <p class="muted">None yet.</p>}
        {choices.map((c) => (
          <label class="check" key={c.value}>
            <input
              type="checkbox"
              name={f.name}
              value={c.value}
              checked={chosen.has(c.value)}
            />{" "}
            {c.label}
          </label>
        ))}
        {help}
        {problems}
      </fieldset>
    );
  }
  let control;
  if (f.kind === "textarea" || f.kind === "json") {
    control = (
      <textarea
        id={id}
        name={f.name}
        rows={f.rows ?? (f.kind === "json" ? 5 : 2)}
        class={f.kind === "json" ? "mono" : ""}
        placeholder={f.placeholder}
        aria-describedby={described}
        aria-invalid={invalid}
        spellcheck={f.kind === "json" ? false : undefined}
      >
        {text}
      </textarea>
    );
  } else if (f.kind === "select" || f.kind === "ref" || f.kind === "bool") {
    const choices = f.kind === "ref"
      ? (refs[f.to!] ?? []).map((r) => ({ value: r.id, label: r.name }))
      : f.kind === "bool"
      ? [{ value: "true", label: "yes" }, { value: "false", label: "no" }]
      : (f.options ?? []).map((o) => ({ value: o, label: o }));
    control = (
      <select id={id} name={f.name} aria-describedby={described} aria-invalid={invalid}>
        <option value="">{f.nullable ? "(default)" : "(choose)"}</option>
        {choices.map((c) => (
          <option key={c.value} value={c.value} selected={c.value === text}>{c.label}</option>
        ))}
      </select>
    );
  } else {
    control = (
      <input
        id={id}
        name={f.name}
        type={f.kind === "number" ? "number" : "text"}
        step={f.kind === "number" ? "any" : undefined}
        value={text}
        required={f.required}
        placeholder={f.placeholder}
        aria-describedby={described}
        aria-invalid={invalid}
      />
    );
  }
  return (
    <div class="field">
      <label for={id}>{f.label}{f.required ? " *" : ""}</label>
      {control}
      {help}
      {problems}
    </div>
  );
};

/** Every field of a form. */
export const Fields: FC<{
  fields: FieldSpec[];
  values: Record<string, unknown>;
  raw?: Record<string, string>;
  errors: FieldErrors;
  refs: RefChoices;
}> = ({ fields, values, raw, errors, refs }) => (
  <>
    {fields.map((f) =>
      f.kind === "options"
        ? (
          <OptionsField
            key={f.name}
            f={f}
            value={values[f.name]}
            type={typeof values.type === "string" ? values.type : ""}
            raw={raw ?? {}}
            errors={errors.get(f.name)}
          />
        )
        : (
          <Field
            key={f.name}
            f={f}
            value={values[f.name]}
            raw={raw?.[f.name]}
            errors={errors.get(f.name)}
            refs={refs}
          />
        )
    )}
  </>
);

/** One typed option of one type, with its label, help and (when its key is named) problems. */
const OptionControlField: FC<{
  f: FieldSpec;
  type: string;
  input: OptionInput;
  text: string;
  chosen: Set<string>;
  errors: string[];
}> = ({ f, type, input, text, chosen, errors }) => {
  const name = inputName(f, type, input.key);
  const id = `f-${f.name}-${type}-${input.key}`;
  const invalid = errors.some((e) => e.startsWith(`${input.key}:`) || e.startsWith(`${input.key}.`))
    ? "true"
    : undefined;
  const help = <p class="help" id={`${id}-help`}>{input.help}</p>;
  if (input.control === "choices") {
    return (
      <fieldset class="field" aria-describedby={`${id}-help`} aria-invalid={invalid}>
        <legend>{input.key}{input.required ? " *" : ""}</legend>
        {(input.choices ?? []).map((c) => (
          <label class="check" key={c}>
            <input type="checkbox" name={name} value={c} checked={chosen.has(c)} /> {c}
          </label>
        ))}
        {help}
      </fieldset>
    );
  }
  let control;
  if (input.control === "select" || input.control === "boolean") {
    const choices = input.control === "boolean"
      ? [{ value: "true", label: "yes" }, { value: "false", label: "no" }]
      : (input.choices ?? []).map((c) => ({ value: c, label: c }));
    control = (
      <select id={id} name={name} aria-describedby={`${id}-help`} aria-invalid={invalid}>
        <option value="">(default)</option>
        {choices.map((c) => (
          <option key={c.value} value={c.value} selected={c.value === text}>{c.label}</option>
        ))}
      </select>
    );
  } else if (input.control === "lines" || input.control === "json") {
    control = (
      <textarea
        id={id}
        name={name}
        rows={input.control === "json" ? 4 : 3}
        class="mono"
        placeholder={input.placeholder}
        aria-describedby={`${id}-help`}
        aria-invalid={invalid}
        spellcheck={false}
      >
        {text}
      </textarea>
    );
  } else {
    const number = input.control === "integer" || input.control === "number";
    const field = (
      <input
        id={id}
        name={name}
        type={number ? "number" : "text"}
        step={input.control === "integer" ? "1" : number ? "any" : undefined}
        value={text}
        placeholder={input.placeholder}
        aria-describedby={`${id}-help`}
        aria-invalid={invalid}
        data-secret={input.control === "secret" ? "true" : undefined}
      />
    );
    control = input.control === "secret"
      ? (
        <span class="secret-ref">
          {"${"}
          {field}
          {"}"}
        </span>
      )
      : field;
  }
  return (
    <div class="field">
      <label for={id}>{input.key}{input.required ? " *" : ""}</label>
      {control}
      {help}
    </div>
  );
};

/**
 * The options of an endpoint, backend or middleware: a group of typed inputs per type of its kind
 * (the chosen type's shown), then the options as JSON for advanced editing.
 */
const OptionsField: FC<{
  f: FieldSpec;
  value: unknown;
  type: string;
  raw: Record<string, string>;
  errors?: string[];
}> = ({ f, value, type, raw, errors }) => {
  const id = `f-${f.name}`;
  const current = value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
  const json = raw[f.name] ??
    (value === null || value === undefined ? "" : JSON.stringify(value, null, 2));
  const was = raw[`${f.name}_was`] ?? json;
  const described = [`${id}-help`, errors?.length ? `${id}-err` : ""].filter(Boolean).join(" ");
  const groups = componentTypes(f.component!).flatMap((t) => {
    const inputs = inputsOf(f, t.name);
    return inputs ? [{ name: t.name, doc: t.doc, inputs }] : [];
  });
  return (
    <fieldset
      class="field"
      data-testid="options-form"
      aria-invalid={errors?.length ? "true" : undefined}
    >
      <legend>{f.label}</legend>
      {groups.map((g) => (
        <div
          class="options-for"
          key={g.name}
          data-options-for={g.name}
          data-testid={`options-for-${g.name}`}
        >
          <p class="help">
            <strong>{g.name}</strong>: {g.doc}
          </p>
          {g.inputs.map((input) => {
            const mine = g.name === type;
            const name = inputName(f, g.name, input.key);
            const chosen = new Set(
              mine && Array.isArray(current[input.key])
                ? (current[input.key] as unknown[]).map(String)
                : [],
            );
            return (
              <OptionControlField
                key={input.key}
                f={f}
                type={g.name}
                input={input}
                text={raw[name] ?? (mine ? inputText(input, current[input.key]) : "")}
                chosen={chosen}
                errors={mine ? errors ?? [] : []}
              />
            );
          })}
        </div>
      ))}
      <label for={id}>Options as JSON (advanced)</label>
      <textarea
        id={id}
        name={f.name}
        rows={f.rows ?? 5}
        class="mono"
        placeholder={f.placeholder}
        aria-describedby={described}
        aria-invalid={errors?.length ? "true" : undefined}
        spellcheck={false}
      >
        {json}
      </textarea>
      <input type="hidden" name={`${f.name}_was`} value={was} />
      <p class="help" id={`${id}-help`}>
        The type's options, as in the gateway configuration reference. Change this JSON to save it
        instead of the fields above; types without fields take their options here.
      </p>
      {errors?.length
        ? (
          <div role="alert">
            <ul class="field-error" id={`${id}-err`}>
              {errors.map((e) => <li key={e}>{e}</li>)}
            </ul>
          </div>
        )
        : null}
    </fieldset>
  );
};
