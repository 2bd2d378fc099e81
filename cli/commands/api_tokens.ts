/** `api-token:create`, `api-token:list`, `api-token:revoke`: the cloud's API tokens, headless. */
import type { Command } from "commander";
import { createApiToken, listApiTokens, revokeApiToken } from "../api_tokens.ts";
import { cloudCredential } from "../cloud_credential.ts";
import type { CliContext } from "../context.ts";
import { usageError } from "../errors.ts";
import { renderTable } from "../table.ts";
import { addCredentialOptions, defineCommand, onAction } from "./common.ts";

function parseDays(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 3650) {
    throw usageError(
      `--expires-in-days must be a whole number of days from 1 to 3650, got ${text}`,
    );
  }
  return n;
}

/** Registers the API token commands. */
export function registerApiTokenCommands(program: Command, ctx: CliContext): void {
  onAction(
    addCredentialOptions(
      defineCommand(program, "api-token:create", "Create an API token in your team (shown once)"),
    )
      .requiredOption("-n, --name <NAME>", "what the token is for (e.g. ci-deploy)")
      .option("-d, --expires-in-days <DAYS>", "lifetime in days (default: no expiry)", parseDays)
      .option("--raw", "print only the token"),
    ctx,
    async (o: { name: string; expiresInDays?: number; raw?: boolean; tokenFile?: string }) => {
      const created = await createApiToken(
        ctx.http,
        await cloudCredential(ctx, o),
        o.name,
        o.expiresInDays ?? null,
      );
      if (o.raw) {
        ctx.out.print(created.token);
        return;
      }
      ctx.out.print(
        `Created API token '${created.name}' (${created.id}), ` +
          `${
            created.expires_at ? `expires ${created.expires_at}` : "no expiry"
          }:\n${created.token}`,
      );
      ctx.out.notice("the token is shown only now: keep it in your secret manager");
    },
  );

  onAction(
    addCredentialOptions(
      defineCommand(program, "api-token:list", "List your team's API tokens (never their text)"),
    )
      .option("--json", "print the cloud's JSON"),
    ctx,
    async (o: { json?: boolean; tokenFile?: string }) => {
      const items = await listApiTokens(ctx.http, await cloudCredential(ctx, o));
      if (o.json) {
        ctx.out.print(JSON.stringify(items, null, 2));
        return;
      }
      if (items.length === 0) {
        ctx.out.info("No API token. Create one with: gwcli api-token:create -n <name>");
        return;
      }
      ctx.out.print(renderTable(
        ["ID", "NAME", "PREFIX", "EXPIRES", "LAST USED", "REVOKED"],
        items.map((t) => [
          t.id,
          t.name,
          t.prefix,
          t.expires_at ?? "-",
          t.last_used_at ?? "-",
          t.revoked_at ?? "-",
        ]),
        { color: ctx.out.color },
      ));
    },
  );

  onAction(
    addCredentialOptions(defineCommand(program, "api-token:revoke", "Revoke an API token"))
      .requiredOption("--id <ID>", "the token's id (api-token:list)"),
    ctx,
    async (o: { id: string; tokenFile?: string }) => {
      const revoked = await revokeApiToken(ctx.http, await cloudCredential(ctx, o), o.id);
      ctx.out.print(`Revoked API token '${revoked.name}' (${revoked.id}).`);
    },
  );
}
