/**
 * The credential of a command that calls the cloud service: an API token for CI and scripts
 * (`--token-file FILE`, else `GWCLI_API_TOKEN`), else the user token of `gwcli login`. An API
 * token needs no login and no keychain: it is read where it is given, checked with the cloud
 * (`GET /api/me`, which also names its team) and never stored by gwcli.
 */
import { resolve } from "node:path";
import type { CliContext } from "./context.ts";
import { authError, CliError, usageError } from "./errors.ts";
import { isGroupOrWorldAccessible } from "./files.ts";
import { apiErrorOf, describeApiError } from "./http.ts";
import { requireSession } from "./session.ts";
import { describeTeam } from "./user_token.ts";

/** Environment variable holding a cloud API token. */
export const API_TOKEN_ENV = "GWCLI_API_TOKEN";
/** How the cloud's API tokens start (anything else is not sent anywhere). */
const API_TOKEN_SHAPE = /^gwc_[A-Za-z0-9_-]{16,}$/;

/** A token to call the cloud with, and how to talk about it. */
export interface CloudCredential {
  apiUrl: string;
  token: string;
  /** `api_token` (from a file or the environment) or `user_token` (gwcli login). */
  kind: "api_token" | "user_token";
  /** Where it came from, for messages: `the API token in GWCLI_API_TOKEN`, `the user token`. */
  label: string;
  /** What to do when the cloud refuses it. */
  refusedHint: string;
  /** The team it acts in, when known. */
  team?: string;
}

/** Options of the commands that call the cloud. */
export interface CredentialOptions {
  /** `--token-file FILE`: a file holding an API token. */
  tokenFile?: string;
}

/** The hint when the cloud refuses an API token. */
function apiTokenHint(where: string): string {
  return "Create a new API token (`gwcli api-token:create -n ci` after `gwcli login`, or on the " +
    `web UI's API tokens page) and put it in ${where}.`;
}

/** Reads the API token of `--token-file`; a missing, empty or malformed file is exit 2. */
async function readTokenFile(ctx: CliContext, file: string): Promise<string> {
  const path = resolve(file);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw usageError(
      `--token-file: cannot read ${path}: ${(err as Error).message}`,
      "Name a file that holds a cloud API token (gwc_…), or set GWCLI_API_TOKEN.",
    );
  }
  if (await isGroupOrWorldAccessible(path).catch(() => false)) {
    ctx.out.warn(`${path} is readable by other users: chmod 600 ${path}`);
  }
  return text.trim();
}

/** Checks the shape of an API token before it is sent anywhere. */
function checkShape(token: string, where: string): string {
  if (token === "") throw usageError(`${where} is empty: it must hold a cloud API token (gwc_…)`);
  if (!API_TOKEN_SHAPE.test(token)) {
    // Not sent: a management token or another secret in the wrong file must not reach the cloud.
    throw usageError(
      `${where} does not hold a cloud API token (they start with gwc_); nothing was sent`,
      "A gateway's management token goes to gateway:add --token-file, not here.",
    );
  }
  return token;
}

/**
 * The credential of this run: `--token-file`, else `GWCLI_API_TOKEN`, else the login. An API
 * token is checked with the cloud first (401: exit 3 with how to get a new one).
 */
export async function cloudCredential(
  ctx: CliContext,
  options: CredentialOptions = {},
): Promise<CloudCredential> {
  const fromEnv = ctx.env(API_TOKEN_ENV)?.trim();
  if (options.tokenFile === undefined && !fromEnv) {
    const session = await requireSession(ctx);
    return {
      apiUrl: session.apiUrl,
      token: session.token,
      kind: "user_token",
      label: "the user token",
      refusedHint: "Run `gwcli login` to log in.",
      team: describeTeam(session.verified),
    };
  }
  const where = options.tokenFile !== undefined
    ? `the token file ${resolve(options.tokenFile)}`
    : API_TOKEN_ENV;
  const token = checkShape(
    options.tokenFile !== undefined ? await readTokenFile(ctx, options.tokenFile) : fromEnv!,
    where,
  );
  const { value: apiUrl } = await ctx.apiUrl();
  ctx.out.debug(1, `API token read from ${where}`);
  const label = `the API token in ${where}`;
  const refusedHint = apiTokenHint(where);
  const res = await ctx.http.send({
    method: "GET",
    url: `${apiUrl}/api/me`,
    headers: { authorization: `Bearer ${token}` },
    peer: "the cloud service",
  });
  if (res.status === 401) {
    throw authError(
      `the cloud service at ${apiUrl} refused ${label}: ${describeApiError(apiErrorOf(res))}`,
      refusedHint,
    );
  }
  if (res.status !== 200) {
    throw new CliError(
      `the cloud service at ${apiUrl} could not check ${label} (${res.status}): ` +
        describeApiError(apiErrorOf(res)),
    );
  }
  const team = (res.body as { team?: { name?: string } } | undefined)?.team?.name;
  return { apiUrl, token, kind: "api_token", label, refusedHint, team };
}

/** The exit-3 error of a credential the cloud refused. */
export function credentialRefused(c: CloudCredential, detail: string): CliError {
  return authError(`the cloud service refused ${c.label}: ${detail}`, c.refusedHint);
}
