/**
 * The route reference of docs/cloud-api.md, rendered from the registry (the same source as the
 * OpenAPI document), so the documentation lists every route with its examples.
 */
import { z } from "zod";
import { openApiPath, type RouteDoc } from "./registry.ts";

const AUTH_TEXT: Record<string, string> = {
  none: "none",
  api_token: "API token",
  user_token: "user token",
  machine: "machine token",
};

function json(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function block(value: unknown, lang: string): string {
  return "```" + lang + "\n" + json(value) + "\n```\n";
}

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  default?: unknown;
  format?: string;
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  if (s.anyOf) return s.anyOf.map(typeOf).join(" or ");
  if (s.type === "array") return `array of ${s.items ? typeOf(s.items) : "any"}`;
  if (Array.isArray(s.type)) return s.type.join(" or ");
  return s.format ? `${s.type} (${s.format})` : s.type ?? "any";
}

function fieldsTable(schema: z.ZodType): string {
  const js = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const props = Object.entries(js.properties ?? {});
  if (!props.length) return "";
  const rows = props.map(([name, s]) => {
    const required = js.required?.includes(name) && s.default === undefined ? "yes" : "no";
    const dflt = s.default === undefined ? "" : `\`${JSON.stringify(s.default)}\``;
    return `| \`${name}\` | ${typeOf(s)} | ${required} | ${dflt} |`;
  });
  return ["| Field | Type | Required | Default |", "|---|---|---|---|", ...rows, ""].join("\n") +
    "\n";
}

function route(doc: RouteDoc): string {
  const out: string[] = [];
  out.push(`#### \`${doc.method.toUpperCase()} ${openApiPath(doc.path)}\`\n`);
  out.push(`${doc.summary}.${doc.description ? ` ${doc.description}` : ""}\n`);
  out.push(`Auth: ${doc.auth.map((a) => AUTH_TEXT[a]).join(" or ")}.\n`);
  const params = [
    ...(doc.query ?? []).map((q) => ({ ...q, where: "query" })),
    ...(doc.headers ?? []).map((h) => ({ ...h, where: "header" })),
  ];
  if (params.length) {
    out.push(params.map((p) => `- \`${p.name}\` (${p.where}): ${p.description}`).join("\n") + "\n");
  }
  if (doc.body) {
    const type = doc.body.contentType ?? "application/json";
    out.push(
      `Request body (\`${type}\`)${doc.body.description ? `: ${doc.body.description}` : ":"}\n`,
    );
    if (doc.body.schema) out.push(fieldsTable(doc.body.schema));
    const lang = type === "application/json"
      ? "json"
      : type === "application/toml"
      ? "toml"
      : "text";
    out.push(block(doc.body.example, lang));
  }
  out.push("Responses:\n");
  for (const [status, r] of Object.entries(doc.responses)) {
    const headers = r.headers
      ? ` (headers: ${Object.entries(r.headers).map(([k, v]) => `\`${k}: ${v}\``).join(", ")})`
      : "";
    out.push(`- \`${status}\` ${r.description}${headers}`);
    if (r.example !== undefined) {
      const lang = (r.contentType ?? "application/json").includes("json") ? "json" : "toml";
      out.push("\n" + block(r.example, lang).replace(/^/gm, "  ").trimEnd());
    }
    out.push("");
  }
  return out.join("\n") + "\n";
}

/** Markdown reference of every route, grouped by tag in registration order. */
export function routesMarkdown(routes: RouteDoc[]): string {
  const tags: string[] = [];
  for (const r of routes) if (!tags.includes(r.tag)) tags.push(r.tag);
  const parts: string[] = [];
  for (const tag of tags) {
    parts.push(`### ${tag}\n`);
    for (const r of routes.filter((x) => x.tag === tag)) parts.push(route(r));
  }
  return parts.join("\n").replace(/\n{3,}/g, "\n\n");
}
