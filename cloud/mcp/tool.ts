/** Declaring a tool once: metadata, input and output schemas, hints, and error handling. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { UserPrincipal } from "../auth/mod.ts";
import type { Services } from "../services.ts";
import { failFrom, ok, principalOf } from "./results.ts";

/** How a tool behaves, for clients deciding whether to ask before calling it. */
export interface Hints {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
}

/** Read-only tools. */
export const READ: Hints = { readOnly: true, destructive: false, idempotent: true };
/** Tools that add records. */
export const CREATE: Hints = { readOnly: false, destructive: false, idempotent: false };
/** Tools that change records in place (same input, same outcome). */
export const CHANGE: Hints = { readOnly: false, destructive: false, idempotent: true };
/** Tools that delete or revoke. */
export const DESTROY: Hints = { readOnly: false, destructive: true, idempotent: true };

/** One tool. */
export interface ToolDef<I extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: z.ZodObject;
  hints: Hints;
  run(args: z.infer<I>, p: UserPrincipal): Promise<Record<string, unknown> | CallToolResult>;
}

/** Registers `def` on `server`; thrown errors become tool errors that say how to fix the call. */
export function addTool<I extends z.ZodObject>(server: McpServer, s: Services, def: ToolDef<I>) {
  server.registerTool(
    def.name,
    {
      title: def.title,
      description: def.description,
      inputSchema: def.input,
      outputSchema: def.output,
      annotations: {
        title: def.title,
        readOnlyHint: def.hints.readOnly,
        destructiveHint: def.hints.destructive,
        idempotentHint: def.hints.idempotent,
        openWorldHint: false,
      },
    },
    // deno-lint-ignore no-explicit-any
    (async (args: any, extra: any) => {
      try {
        const out = await def.run(args, principalOf(extra));
        return "content" in out && Array.isArray(out.content) ? out : ok(out);
      } catch (err) {
        const result = failFrom(err, s, def.name);
        // Clients that asked for logs (logging/setLevel) see why a call failed in their log too.
        const text = (result.content[0] as { text?: string } | undefined)?.text ?? "failed";
        void server.server.sendLoggingMessage(
          { level: "warning", logger: def.name, data: { tool: def.name, error: text } },
          extra?.sessionId,
        ).catch(() => {});
        return result;
      }
    }) as never,
  );
}

/** A record in an output schema: its common fields, everything else passed through. */
export const recordOut = z.looseObject({
  id: z.string().describe("The record's id (UUID)."),
  name: z.string().describe("The record's name, unique in its team."),
  team_id: z.string().describe("The owning team."),
  revision: z.number().describe("Starts at 1, +1 on every update."),
});

/** `limit` and `cursor` of list tools. */
export const pageInput = {
  limit: z.int().min(1).max(100).default(50).describe(
    "Records per page, 1-100 (default 50).",
  ),
  cursor: z.string().optional().describe(
    "The next_cursor of the previous page, unchanged; omit for the first page.",
  ),
};
