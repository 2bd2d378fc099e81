/**
 * `gateway:authorize`: the logged-in user (or an API token: `--token-file`, `GWCLI_API_TOKEN`)
 * authorizes a registered gateway with the cloud service.
 *
 * 1. load and verify the user token (`login` first), or check the API token with the cloud;
 * 2. read the instance's `GET /{prefix}/info`: `cloud.enabled` must be true, `cloud.url` (when
 *    reported) must be gwcli's `api-url`, and `cloud.gateway_code` names the gateway (else
 *    `-g/--gateway-code`, else a prompt on a terminal);
 * 3. `POST /api/gateway/authorize` on the cloud with that token: the machine-token payload;
 * 4. store the gateway id against the local instance;
 * 5. `POST /{prefix}/token` on the gateway with the payload;
 * 6. `--update`: `gateway:update`; without it, ask on a terminal (unless `-y`), else skip.
 */
import type { Command } from "commander";
import type { MachineTokenPayload } from "../../shared/mod.ts";
import { authorizeGateway } from "../cloud_api.ts";
import { cloudCredential } from "../cloud_credential.ts";
import type { CliContext } from "../context.ts";
import { CliError, usageError } from "../errors.ts";
import { describeInstance, type Instance, replaceInstance } from "../instances.ts";
import { errorCode, ManagementClient } from "../management_client.ts";
import { confirm } from "../prompt.ts";
import { parseGatewayCode } from "./auth.ts";
import {
  addCredentialOptions,
  addInstanceOptions,
  addYesOption,
  defineCommand,
  type InstanceOptions,
  onAction,
  selectInstance,
} from "./common.ts";
import { CLOUD_UNREACHABLE_HINT, cloudDisabledHint, uploadConfiguration } from "./gateway_api.ts";
import { cloudOf } from "./gateway_views.ts";

/** Options of `gateway:authorize`. */
interface AuthorizeOptions extends InstanceOptions {
  update?: boolean;
  yes?: boolean;
  gatewayCode?: string;
  tokenFile?: string;
}

/** The gateway code: the gateway's own, `--gateway-code` (must agree), or a prompt. */
async function chooseGatewayCode(
  ctx: CliContext,
  instance: Instance,
  reported: unknown,
  options: AuthorizeOptions,
): Promise<string> {
  if (typeof reported === "string" && reported !== "") {
    if (options.gatewayCode !== undefined && options.gatewayCode !== reported) {
      throw usageError(
        `${describeInstance(instance)} is configured with gateway code '${reported}', ` +
          `not '${options.gatewayCode}'`,
        "Leave out -g/--gateway-code to use the gateway's own code.",
      );
    }
    return reported;
  }
  if (options.gatewayCode !== undefined) return options.gatewayCode;
  if (!options.yes && ctx.prompter.interactive) {
    const answer = await ctx.prompter.ask(
      `Gateway code for ${describeInstance(instance)} (letters, digits, '.', '_', '-'): `,
    );
    if (answer !== null && answer.trim() !== "") return parseGatewayCode(answer.trim());
  }
  throw usageError(
    `${describeInstance(instance)} reports no gateway code`,
    "Pass one with -g/--gateway-code CODE (it names the gateway in the cloud service).",
  );
}

/** Sends the payload to the gateway's `/token`; explains every refusal. */
async function sendToken(
  client: ManagementClient,
  payload: MachineTokenPayload,
  apiUrl: string,
): Promise<Record<string, unknown>> {
  const instance = client.instance;
  const res = await client.token(payload);
  if (res.status === 200) return (res.body ?? {}) as Record<string, unknown>;
  const what = `POST /${instance.prefix}/token`;
  switch (errorCode(res)) {
    case "cloud_disabled":
      throw client.failure(what, res, cloudDisabledHint(instance));
    case "machine_token_rejected":
      throw client.failure(
        what,
        res,
        `The gateway checks tokens with the cloud in its [cloud] url: it must be ${apiUrl}.`,
      );
    case "cloud_unreachable":
      throw client.failure(what, res, CLOUD_UNREACHABLE_HINT);
    case "not_implemented":
      throw client.failure(
        what,
        res,
        "This gateway release cannot store machine tokens: upgrade it (gwcli gateway:install), " +
          `or start it with GATEWAY_MACHINE_TOKEN set to the output of ` +
          `\`gwcli token:get -g ${payload.gateway_code}\`.`,
      );
    default:
      throw client.failure(what, res);
  }
}

/** Registers `gateway:authorize`. */
export function registerAuthorize(program: Command, ctx: CliContext): void {
  onAction(
    addYesOption(
      addCredentialOptions(addInstanceOptions(
        defineCommand(
          program,
          "gateway:authorize",
          "Authorize an instance with the cloud service (needs login or an API token, and cloud.enabled)",
        ),
      )),
      "ask nothing; without --update the upload is skipped",
    )
      .option("--update", "upload the instance's configuration afterwards (gateway:update)")
      .option(
        "-g, --gateway-code <CODE>",
        "gateway code, when the gateway does not report one",
        parseGatewayCode,
      ),
    ctx,
    async (options: AuthorizeOptions) => {
      const credential = await cloudCredential(ctx, options);
      const { instance } = await selectInstance(ctx, options);
      const client = new ManagementClient(ctx.http, instance, ctx.env);
      const cloud = cloudOf(await client.info());
      if (!cloud.enabled) {
        throw new CliError(
          `cloud integration is disabled on ${describeInstance(instance)}`,
          { hint: cloudDisabledHint(instance) },
        );
      }
      if (typeof cloud.url === "string" && cloud.url.replace(/\/+$/, "") !== credential.apiUrl) {
        throw new CliError(
          `${describeInstance(instance)} works with the cloud service at ${cloud.url}, ` +
            (credential.kind === "user_token"
              ? `but gwcli is logged in to ${credential.apiUrl}`
              : `but gwcli's api-url is ${credential.apiUrl}`),
          {
            hint: `Run \`gwcli config:set api-url ${cloud.url}\` and \`gwcli login\`, ` +
              "or change the gateway's [cloud] url.",
          },
        );
      }
      const code = await chooseGatewayCode(ctx, instance, cloud.gateway_code, options);
      const { payload, created } = await authorizeGateway(ctx.http, credential, code);
      const team = credential.team;
      ctx.out.info(
        `${created ? "Created" : "Found"} gateway '${code}' (${payload.gateway_id}) in the cloud` +
          `${team ? ` (team ${team})` : ""}.`,
      );
      const updated: Instance = { ...instance, gateway_id: payload.gateway_id };
      const latest = await ctx.instances();
      await ctx.saveInstances(replaceInstance(latest, updated));
      const stored = await sendToken(client, payload, credential.apiUrl);
      ctx.out.print(
        `Authorized ${describeInstance(instance)} as gateway '${code}' (${payload.gateway_id}); ` +
          `the machine token expires at ${payload.expires_at}.`,
      );
      if (stored.persisted === false) {
        ctx.out.warn(
          "the gateway keeps the token in memory only and loses it on restart: " +
            "set GATEWAY_ENCRYPTION_KEY on the gateway",
        );
      }
      let upload = options.update === true;
      if (!upload && !options.yes && ctx.prompter.interactive) {
        upload = await confirm(
          ctx.prompter,
          "Upload the instance's local configuration to the cloud service now?",
        );
      }
      if (upload) {
        await uploadConfiguration(ctx, client);
      } else {
        ctx.out.info(
          `Configuration upload skipped; run \`gwcli gateway:update --id ${instance.id}\` to upload it.`,
        );
      }
    },
  );
}
