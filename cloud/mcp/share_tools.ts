/** Sharing: share a record with another team, list shares, revoke a share. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { shareCreate } from "../resources/mod.ts";
import { RESOURCE_KINDS } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { addTool, CREATE, DESTROY, READ } from "./tool.ts";

const shareOut = z.looseObject({
  id: z.string(),
  team_id: z.string().describe("The owning team."),
  resource_kind: z.string(),
  resource_id: z.string(),
  target_team_id: z.string().describe("The team the record is shared with."),
  access: z.enum(["read", "write"]),
});

/** Registers share-resource, list-shares and revoke-share. */
export function addShareTools(server: McpServer, s: Services): void {
  addTool(server, s, {
    name: "share-resource",
    title: "Share a record with another team",
    description:
      "Grants another team read (get) or write (get and update, never delete) access to one record of your team. A record can be shared with a team once; revoke-share and share again to change access.",
    input: z.strictObject({
      resource_kind: z.enum(RESOURCE_KINDS).describe("Kind of the record, e.g. transforms."),
      resource_id: z.uuid("must be a UUID").describe("Id of the record (from list-<kind>)."),
      team_id: z.uuid("must be a UUID").describe("Id of the team to share with."),
      access: z.enum(["read", "write"]).describe("read: get only; write: get and update."),
    }),
    output: z.object({ share: shareOut }),
    hints: CREATE,
    run: async (args, p) => ({
      share: await s.shares.share(p.team.id, p.actor, shareCreate.parse(args)),
    }),
  });

  addTool(server, s, {
    name: "list-shares",
    title: "List shares",
    description:
      "Lists the shares your team granted (direction outgoing, default) or received from other teams (incoming). Read a received record with get-<kind>.",
    input: z.strictObject({
      direction: z.enum(["outgoing", "incoming"]).default("outgoing").describe(
        "outgoing: shares your team granted; incoming: shares granted to your team.",
      ),
    }),
    output: z.object({ items: z.array(shareOut) }),
    hints: READ,
    run: async (args, p) => ({
      items: args.direction === "incoming"
        ? await s.shares.incoming(p.team.id)
        : await s.shares.outgoing(p.team.id),
    }),
  });

  addTool(server, s, {
    name: "revoke-share",
    title: "Revoke a share",
    description: "Ends a share your team granted; the other team loses access at once.",
    input: z.strictObject({
      share_id: z.uuid("must be a UUID").describe("Id of the share (list-shares)."),
    }),
    output: z.object({ revoked: shareOut }),
    hints: DESTROY,
    run: async (args, p) => ({
      revoked: await s.shares.revoke(p.team.id, p.actor, args.share_id),
    }),
  });
}
