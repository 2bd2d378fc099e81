/**
 * The key reference of docs/configuration.md, rendered from the schema tables so the docs cannot
 * drift from what validation accepts (a test compares the two).
 */
import { BACKEND_AUTH } from "./backend_auth.ts";
import type { FieldSpec, TableSpec } from "./fields.ts";
import {
  AUDIT,
  BACKEND,
  CLOUD,
  CONTENT_LIMITS,
  DICOM_PEER,
  ENDPOINT,
  HEALTH_CHECK,
  HTTP3_LISTENER,
  LOGGING,
  MANAGEMENT,
  MIDDLEWARE,
  NETWORK,
  PIPELINE,
  QUEUE,
  RUNTIME,
  TARGET,
  TOP_LEVEL,
} from "./schema.ts";
import {
  BACKEND_OPTION_SCHEMAS,
  ENDPOINT_OPTION_SCHEMAS,
  MIDDLEWARE_OPTION_SCHEMAS,
  type OptionSchema,
} from "./service_options.ts";

/** Markdown tables of every key: type, required, default, example, meaning. */
export function configReferenceMarkdown(): string {
  const parts = [
    table("Top level", TOP_LEVEL),
    table("`[cloud]`", CLOUD),
    table("`[network.<name>]`", NETWORK),
    table("`[network.<name>.http3]`", HTTP3_LISTENER),
    table("`[endpoints.<name>]`", ENDPOINT),
    ...options("endpoints", "service", ENDPOINT_OPTION_SCHEMAS),
    table("`[backends.<name>]`", BACKEND),
    table("`[backends.<name>.health_check]`", HEALTH_CHECK),
    table(
      "`[backends.<name>.queue]`",
      QUEUE,
      "Durable delivery: requests are kept on disk, answered 202 and delivered in the background (docs/delivery.md).",
    ),
    ...options("backends", "service", BACKEND_OPTION_SCHEMAS),
    table(
      "`[backends.<name>.options.auth]`",
      BACKEND_AUTH,
      "Credentials of an `http`, `fhir`, `dicomweb` or `http3` backend (docs/security.md).",
    ),
    table("`[targets.<name>]`", TARGET),
    table("`[middleware.<name>]`", MIDDLEWARE),
    ...options("middleware", "type", MIDDLEWARE_OPTION_SCHEMAS),
    table("`[pipelines.<name>]`", PIPELINE),
    table("`[proxy.content_limits]`", CONTENT_LIMITS),
    table("`[management]`", MANAGEMENT),
    table("`[logging]`", LOGGING),
    table("`[runtime]`", RUNTIME),
    table("`[audit]`", AUDIT),
    table(
      "`[dicom.peers.<AET>]`",
      DICOM_PEER,
      "A remote DICOM AE (the table name is its AE title): the destinations C-MOVE requests to a `dicom_scp` endpoint may name.",
    ),
  ];
  return parts.join("\n");
}

function options(
  section: string,
  selector: string,
  schemas: Record<string, OptionSchema<never>>,
): string[] {
  return Object.entries(schemas).map(([name, schema]) => {
    const title = `\`[${section}.<name>.options]\` with ${selector} = "${name}"`;
    if (!schema.fields) return `### ${title}\n\n${schema.doc} Any options table is accepted.\n`;
    return table(title, schema.fields, schema.doc);
  });
}

function table(title: string, spec: TableSpec, intro?: string): string {
  const head = `### ${title}\n\n${intro ? intro + "\n\n" : ""}`;
  const rows = Object.entries(spec);
  if (rows.length === 0) return `${head}No keys.\n`;
  return head +
    "| Key | Type | Required | Default | Example | Meaning |\n" +
    "|---|---|---|---|---|---|\n" +
    rows.map(([key, f]) => row(key, f)).join("\n") + "\n";
}

function row(key: string, f: FieldSpec): string {
  const required = f.required ? "yes" : f.requiredWhen ? `when ${f.requiredWhen}` : "no";
  const fallback = f.default !== undefined ? `\`${inline(f.default)}\`` : f.defaultDoc ?? "";
  const example = f.example !== undefined ? `\`${key} = ${inline(f.example)}\`` : "";
  return `| \`${key}\` | ${f.type} | ${required} | ${fallback} | ${example} | ${f.doc} |`
    .replaceAll("\n", " ");
}

/** A TOML inline value, for examples and defaults. */
function inline(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(inline).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const pairs = Object.entries(value).map(([k, v]) => `${k} = ${inline(v)}`);
    return `{ ${pairs.join(", ")} }`;
  }
  return String(value);
}
