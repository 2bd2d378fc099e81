/** Tool results: structured successes, and `isError` results whose text says how to fix the call. */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { toApiError } from "../api/mod.ts";
import type { UserPrincipal } from "../auth/mod.ts";
import type { Services } from "../services.ts";

/** A successful result: the JSON text and the same object as `structuredContent`. */
export function ok(structured: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(structured, null, 2) }],
    structuredContent: structured,
  };
}

/** A tool error with a message that tells the caller what to change. */
export function fail(message: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: message }] };
}

const HINTS: Record<string, string> = {
  not_found:
    "Check the id: call the matching list-* tool to see the ids of your current team (records of other teams are never visible).",
  name_taken:
    "Choose another name, or call the matching get-*/update-* tool on the existing record.",
  reference_missing:
    "Create the referenced record first, or pass an id returned by the matching list-* tool.",
  in_use:
    "Remove the references listed in used_by first (detach-* tools, or update the referring records), then delete again.",
  conflict: "Read the record again (get-*) and retry with its current state.",
  forbidden:
    "Records shared with your team cannot be deleted, and read-only shares cannot be changed; ask the owning team.",
  validation_failed: "Fix the listed fields and call the tool again.",
  payload_too_large: "Send a smaller input.",
  rate_limited: "Wait and retry later.",
};

/** The caller's principal, set by the HTTP layer on every request. */
export function principalOf(extra: { authInfo?: AuthInfo }): UserPrincipal {
  const p = extra.authInfo?.extra?.principal as UserPrincipal | undefined;
  if (!p) throw new Error("no authenticated caller");
  return p;
}

/** Turns a thrown error into a tool error (store and API errors keep their code and fields). */
export function failFrom(err: unknown, s: Services, tool: string): CallToolResult {
  const api = toApiError(err);
  if (!api) {
    s.options.logger.error("mcp tool failed", {
      tool,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
    return fail(`${tool} failed unexpectedly; the error was logged. Retry, or report it.`);
  }
  const lines = [`${api.code}: ${api.message}`];
  for (const f of api.fields ?? []) lines.push(`- ${f.field || "(input)"}: ${f.message}`);
  const usedBy = api.details?.used_by;
  if (usedBy) lines.push(`used_by: ${JSON.stringify(usedBy)}`);
  const problems = api.details?.problems;
  if (problems) lines.push(`problems: ${JSON.stringify(problems)}`);
  if (HINTS[api.code]) lines.push(`How to fix: ${HINTS[api.code]}`);
  return fail(lines.join("\n"));
}
