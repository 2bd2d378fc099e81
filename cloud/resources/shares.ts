/**
 * Sharing a record with another team: who may share what with whom, for the REST API and the MCP
 * tools alike. A team shares only its own records, with another team that exists; read lets the
 * other team get the record, write also update it, never delete.
 */
import { type Actor, type ShareRecord, type Store, StoreError } from "../store/mod.ts";
import { KINDS } from "./kinds.ts";
import type { ShareCreate } from "./schemas.ts";
import type { ResourceService } from "./service.ts";

/** Share operations of a team. */
export class ShareService {
  readonly #store: Store;
  readonly #resources: ResourceService;

  constructor(store: Store, resources: ResourceService) {
    this.#store = store;
    this.#resources = resources;
  }

  /**
   * Shares a record of `teamId` (not_found: no such record of the team, or no such other team;
   * conflict: already shared with that team).
   */
  async share(teamId: string, actor: Actor, request: ShareCreate): Promise<ShareRecord> {
    const kind = request.resource_kind;
    const record = await this.#resources.get(kind, teamId, request.resource_id);
    if (!record) {
      throw new StoreError("not_found", `${KINDS[kind].one} not found`, { field: "resource_id" });
    }
    if (request.team_id === teamId || !(await this.#store.identity.team(request.team_id))) {
      throw new StoreError("not_found", "team not found", { field: "team_id" });
    }
    return await this.#store.shares.create(teamId, actor, {
      kind,
      resourceId: record.id,
      resourceName: record.name,
      targetTeamId: request.team_id,
      access: request.access,
    });
  }

  /** Shares the team granted. */
  outgoing(teamId: string): Promise<ShareRecord[]> {
    return this.#store.shares.outgoing(teamId);
  }

  /** Shares other teams granted to the team. */
  incoming(teamId: string): Promise<ShareRecord[]> {
    return this.#store.shares.incoming(teamId);
  }

  /** Ends a share the team granted; not_found when it has no such share. */
  async revoke(teamId: string, actor: Actor, shareId: string): Promise<ShareRecord> {
    const share = await this.#store.shares.delete(teamId, actor, shareId);
    if (!share) throw new StoreError("not_found", "share not found", { field: "share_id" });
    return share;
  }
}
