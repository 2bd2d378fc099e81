/** `logout`, `verify` and `token:get`: the stored user token and what it is exchanged for. */
import type { Command } from "commander";
import { GATEWAY_CODE_PATTERN } from "../../shared/mod.ts";
import { authorizeGateway } from "../cloud_api.ts";
import { cloudCredential } from "../cloud_credential.ts";
import type { CliContext } from "../context.ts";
import { usageError } from "../errors.ts";
import { requireSession } from "../session.ts";
import { formatDuration } from "../time.ts";
import { describeTeam, describeUser } from "../user_token.ts";
import { addCredentialOptions, defineCommand, onAction } from "./common.ts";

/** Checks a gateway code (1-64 letters, digits, `.`, `_`, `-`, starting with a letter or digit). */
export function parseGatewayCode(text: string): string {
  if (!GATEWAY_CODE_PATTERN.test(text)) {
    throw usageError(
      `invalid gateway code ${JSON.stringify(text)}: use 1-64 letters, digits, '.', '_' or '-', ` +
        "starting with a letter or digit",
    );
  }
  return text;
}

/** Registers `logout`, `verify` and `token:get`. */
export function registerAuthCommands(program: Command, ctx: CliContext): void {
  onAction(
    defineCommand(program, "logout", "Remove the user token from secure storage"),
    ctx,
    async () => {
      const { value: apiUrl } = await ctx.apiUrl();
      const removed = await ctx.store(apiUrl).clear();
      if (removed.length === 0) {
        ctx.out.print("Not logged in: no token was stored.");
        return;
      }
      ctx.out.print(`Logged out: removed the token from the ${removed.join(" and the ")}.`);
    },
  );

  onAction(
    defineCommand(program, "verify", "Verify the stored user token and show its claims"),
    ctx,
    async () => {
      const session = await requireSession(ctx);
      const v = session.verified;
      const rows: [string, string][] = [
        ["Issuer", v.issuer],
        ["Subject", v.subject],
      ];
      if (v.audience.length) rows.push(["Audience", v.audience.join(", ")]);
      if (v.user) rows.push(["User", describeUser(v)]);
      const team = describeTeam(v);
      if (team) rows.push(["Team", v.team?.id && v.team.name ? `${team} (${v.team.id})` : team]);
      rows.push(["Expires", v.expiresAt.toISOString()]);
      rows.push(["Time left", formatDuration(v.expiresAt.getTime() - ctx.now())]);
      rows.push(["Stored in", session.location]);
      const width = Math.max(...rows.map(([k]) => k.length)) + 2;
      ctx.out.print(
        ["The token is valid.", ...rows.map(([k, val]) => `${`${k}:`.padEnd(width)}${val}`)]
          .join("\n"),
      );
    },
  );

  onAction(
    addCredentialOptions(defineCommand(
      program,
      "token:get",
      "Print a machine token for a gateway code (creates the gateway in the cloud if missing)",
    ))
      .requiredOption(
        "-g, --gateway-code <CODE>",
        "gateway code (the instance id)",
        parseGatewayCode,
      )
      .option("--raw", "print only the token"),
    ctx,
    async (options: { gatewayCode: string; raw?: boolean; tokenFile?: string }) => {
      const credential = await cloudCredential(ctx, options);
      const { payload, created } = await authorizeGateway(
        ctx.http,
        credential,
        options.gatewayCode,
      );
      if (created) {
        ctx.out.notice(
          `created gateway '${payload.gateway_code}' (${payload.gateway_id}) in the cloud service`,
        );
      }
      ctx.out.print(options.raw ? payload.machine_token : JSON.stringify(payload, null, 2));
    },
  );
}
