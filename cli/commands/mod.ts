/**
 * Every gwcli command, registered in the order of `gwcli list`.
 *
 * @example
 * ```ts
 * import { parseGatewayCode } from "./mod.ts";
 *
 * // A gateway's code names it within a team: letters, digits, '.', '_' or '-'.
 * console.log(parseGatewayCode("radiology-01")); // radiology-01
 * try {
 *   parseGatewayCode("../etc");
 * } catch (err) {
 *   console.log((err as Error).message.startsWith("invalid gateway code")); // true
 * }
 * ```
 *
 * @module
 */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { registerApiTokenCommands } from "./api_tokens.ts";
import { registerAuthCommands } from "./auth.ts";
import { registerConfigCommands } from "./config.ts";
import { registerDeprecatedCommands } from "./deprecated.ts";
import { registerGatewayApiCommands, registerUpdate } from "./gateway_api.ts";
import { registerAuthorize } from "./gateway_authorize.ts";
import { registerInstall } from "./gateway_install.ts";
import { registerRegistryCommands } from "./gateway_registry.ts";
import { registerGeneralCommands } from "./general.ts";
import { registerQueueCommands } from "./gateway_queues.ts";
import { registerAlertCommands } from "./gateway_alerts.ts";
import { registerLogin } from "./login.ts";
import { registerMessageCommands } from "./messages.ts";
import { registerSelfUpdate } from "./self_update.ts";

/** Adds every command to `program`. */
export function registerCommands(program: Command, ctx: CliContext): void {
  registerGeneralCommands(program, ctx);
  registerLogin(program, ctx);
  registerAuthCommands(program, ctx);
  registerApiTokenCommands(program, ctx);
  registerConfigCommands(program, ctx);
  registerSelfUpdate(program, ctx);
  registerInstall(program, ctx);
  registerRegistryCommands(program, ctx);
  registerGatewayApiCommands(program, ctx);
  registerAuthorize(program, ctx);
  registerUpdate(program, ctx);
  registerQueueCommands(program, ctx);
  registerAlertCommands(program, ctx);
  registerMessageCommands(program, ctx);
  registerDeprecatedCommands(program, ctx);
}

export { commandList } from "./general.ts";
export { keyGuidance } from "./deprecated.ts";
export { cloudOf, infoRows, pipelineRows, routeRows } from "./gateway_views.ts";
export { parseGatewayCode } from "./auth.ts";
export { addGlobalOptions } from "./common.ts";
