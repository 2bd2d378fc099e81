/** The audit log: one entry per change, written in the same atomic operation as the change. */
import { iso } from "../clock.ts";
import { uuidv7 } from "./ids.ts";
import { K } from "./keys.ts";
import { listPage, type Page } from "./kv.ts";

/** Who made a change. */
export interface Actor {
  type: "user" | "api_token" | "mcp_client" | "machine" | "system";
  /** User id, API token id, MCP client grant id, or gateway id. */
  id: string;
  /** Email of the user, `token name (email)`, or the gateway code. */
  label: string;
  /** The user behind an API token or session. */
  user_id?: string;
}

/** One audit entry. */
export interface AuditEntry {
  id: string;
  at: string;
  actor: Actor;
  /** `<kind>.<verb>`, e.g. `pipeline.created`, `api_token.revoked`. */
  action: string;
  resource: { kind: string; id: string; name?: string };
  /** Top-level fields that changed (updates). */
  changed?: string[];
}

/** Adds the audit entry of a change to `op`. */
export function addAudit(
  op: Deno.AtomicOperation,
  teamId: string,
  now: number,
  entry: Omit<AuditEntry, "id" | "at">,
): void {
  const id = uuidv7(now);
  op.set(K.audit(teamId, id), { id, at: iso(now), ...entry });
}

/**
 * Reads the team's audit log, newest first: optionally only actions starting with `action`, and
 * entries whose actor or record name contains `text` (case-insensitive).
 */
export function listAudit(
  kv: Deno.Kv,
  teamId: string,
  page: { limit: number; cursor?: string; action?: string; text?: string },
): Promise<Page<AuditEntry>> {
  const text = page.text?.toLowerCase();
  return listPage<AuditEntry>(kv, K.audits(teamId), {
    limit: page.limit,
    cursor: page.cursor,
    reverse: true,
    filter: page.action || text
      ? (e) =>
        (!page.action || e.action.startsWith(page.action)) &&
        (!text || e.actor.label.toLowerCase().includes(text) ||
          (e.resource.name ?? "").toLowerCase().includes(text))
      : undefined,
  });
}

/** Marks a change of the team's data (long polls of its gateways wake up). */
export function bumpRevision(op: Deno.AtomicOperation, teamId: string): void {
  op.sum(K.revision(teamId), 1n);
}
