/**
 * The management token gwcli sends to a gateway instance, found without an extra step:
 *
 * 1. `GWCLI_MANAGEMENT_TOKEN` (scripts, CI);
 * 2. the instance's `token_file` (`gwcli gateway:add --token-file FILE`);
 * 3. for an instance on this host, the discovery file the gateway writes for its management port
 *    (`~/.local/state/healthcare-gateway/management/<port>.json`), which names its token file.
 *
 * The token is read from its file at each run, never copied into gwcli's own files.
 */
import { discoveryPath, parseDiscovery } from "../shared/mod.ts";
import type { Env } from "./env.ts";
import { CliError } from "./errors.ts";
import type { Instance } from "./instances.ts";

/** Environment variable with the management token itself. */
export const MANAGEMENT_TOKEN_ENV = "GWCLI_MANAGEMENT_TOKEN";

const LOCAL = new Set(["127.0.0.1", "::1", "localhost"]);

async function readToken(file: string, what: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    throw new CliError(
      `cannot read the management token file ${file} (${what}): ${(err as Error).message}`,
      {
        hint: "Check the path and that you may read it (the gateway creates it 0600 for its user).",
      },
    );
  }
  const token = text.trim();
  if (!token) throw new CliError(`the management token file ${file} (${what}) is empty`);
  return token;
}

/** The token for `instance`, or undefined when none is known (the gateway then answers 401). */
export async function managementTokenFor(
  instance: Instance,
  env: Env,
): Promise<string | undefined> {
  const fromEnv = env(MANAGEMENT_TOKEN_ENV)?.trim();
  if (fromEnv) return fromEnv;
  if (instance.token_file) return await readToken(instance.token_file, "gateway:add --token-file");
  if (!LOCAL.has(instance.ip.replace(/^\[|\]$/g, ""))) return undefined;
  const path = discoveryPath(instance.port, env);
  if (!path) return undefined;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return undefined;
  }
  const found = parseDiscovery(text);
  return found ? await readToken(found.token_file, `named by ${path}`) : undefined;
}

/** The hint of a 401 from a gateway: where gwcli looked and how to point it at the token. */
export function tokenHint(instance: Instance): string {
  return `The gateway's management API needs its token. gwcli looks in ${MANAGEMENT_TOKEN_ENV}, ` +
    "then in the instance's token file, then (for a gateway on this host) in the file the gateway " +
    "writes under ~/.local/state/healthcare-gateway/management/. Register the token file with: " +
    `gwcli gateway:remove --id ${instance.id} && gwcli gateway:add -i ${instance.ip} -p ${instance.port} ` +
    `-x ${instance.prefix} --token-file <state_dir>/management-token`;
}
