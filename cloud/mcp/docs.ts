/** The tool reference of docs/mcp.md, generated from the tools as the server lists them. */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { TOOL_EXAMPLES } from "./examples.ts";

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
};

function typeOf(s: Schema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.anyOf) return s.anyOf.map(typeOf).join(" | ");
  if (s.type === "array") return `array of ${s.items ? typeOf(s.items) : "any"}`;
  if (Array.isArray(s.type)) return s.type.join(" | ");
  return s.type ?? "any";
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** Markdown of every tool: title, description, hints, input fields and an example call. */
export function toolsMarkdown(tools: Tool[]): string {
  const examples = new Map(TOOL_EXAMPLES);
  const out: string[] = [];
  for (const t of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    const a = t.annotations ?? {};
    out.push(`### \`${t.name}\` — ${t.title}`, "", t.description ?? "", "");
    out.push(
      `readOnlyHint: ${a.readOnlyHint}, destructiveHint: ${a.destructiveHint}, idempotentHint: ${a.idempotentHint}`,
      "",
    );
    const props = (t.inputSchema.properties ?? {}) as Record<string, Schema>;
    const required = new Set(t.inputSchema.required ?? []);
    if (Object.keys(props).length) {
      out.push("| Field | Type | Required | Description |", "|---|---|---|---|");
      for (const [name, s] of Object.entries(props)) {
        const dflt = s.default !== undefined ? ` Default: \`${JSON.stringify(s.default)}\`.` : "";
        out.push(
          `| \`${name}\` | ${cell(typeOf(s))} | ${required.has(name) ? "yes" : "no"} | ${
            cell((s.description ?? "") + dflt)
          } |`,
        );
      }
      out.push("");
    }
    const example = examples.get(t.name);
    if (example) {
      out.push("Example arguments:", "", "```json", JSON.stringify(example, null, 2), "```", "");
    }
  }
  return out.join("\n");
}
