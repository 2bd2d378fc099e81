/**
 * The key reference of docs/configuration.md, rendered from the table of sections (tree.ts) and
 * the registry's component types, so the docs cannot drift from what validation accepts (a test
 * compares the two). A type a program registered appears beside the built-in ones of its kind.
 */
import type { FieldSpec, TableSpec } from "./fields.ts";
import { componentTypes } from "./registry.ts";
import { CONFIG_TABLES } from "./tree.ts";

/** Markdown tables of every key: type, required, default, example, meaning. */
export function configReferenceMarkdown(): string {
  const parts = CONFIG_TABLES.flatMap((described) => {
    const title = described.title ?? `\`[${described.path}]\``;
    if (!described.component) return [table(title, described.spec ?? {}, described.intro)];
    const { kind, selector } = described.component;
    return componentTypes(kind).map((type) => {
      const heading = `\`[${described.path}]\` with ${selector} = "${type.name}"`;
      if (!type.fields) return `### ${heading}\n\n${type.doc} Any options table is accepted.\n`;
      return table(heading, type.fields, type.doc);
    });
  });
  return parts.join("\n");
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
