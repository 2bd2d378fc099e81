/**
 * `login`: the device flow (RFC 8628). With a valid stored token for the configured cloud it only
 * says so. Otherwise it shows the verification URL and user code, tries to open a browser, polls,
 * stores the token in secure storage and verifies it (RS256, JWKS, pinned issuer).
 */
import type { Command } from "commander";
import type { CliContext } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { fetchMetadata } from "../discovery.ts";
import { pollForToken, requestDeviceCode } from "../device_flow.ts";
import { formatDuration } from "../time.ts";
import {
  describeTeam,
  describeUser,
  type VerifiedUserToken,
  verifyUserToken,
} from "../user_token.ts";
import { defineCommand, onAction } from "./common.ts";

/** `Ada <ada@example.com> in team Radiology`. */
export function whoIs(v: VerifiedUserToken): string {
  const team = describeTeam(v);
  return `${describeUser(v)}${team ? ` in team ${team}` : ""}`;
}

/** `until <ISO> (23h 59m left)`. */
export function validity(v: VerifiedUserToken, now: number): string {
  return `until ${v.expiresAt.toISOString()} (${formatDuration(v.expiresAt.getTime() - now)} left)`;
}

/** The stored token when it is valid for `apiUrl`; null when there is none or it is invalid. */
async function currentLogin(
  ctx: CliContext,
  apiUrl: string,
): Promise<VerifiedUserToken | null> {
  const loaded = await ctx.store(apiUrl).load();
  if (!loaded) return null;
  if (loaded.credentials.api_url !== apiUrl) {
    ctx.out.info(
      `The stored token is from ${loaded.credentials.api_url}; logging in to ${apiUrl}.`,
    );
    return null;
  }
  try {
    return await verifyUserToken(
      ctx.http,
      apiUrl,
      loaded.credentials.access_token,
      new Date(ctx.now()),
    );
  } catch (err) {
    if (err instanceof CliError && err.exitCode === EXIT.auth) {
      ctx.out.info(`${err.message[0].toUpperCase()}${err.message.slice(1)}: logging in again.`);
      return null;
    }
    throw err;
  }
}

/** Registers `login`. */
export function registerLogin(program: Command, ctx: CliContext): void {
  onAction(
    defineCommand(program, "login", "Log in to the cloud service in a browser (device code)"),
    ctx,
    async () => {
      const { value: apiUrl } = await ctx.apiUrl();
      const existing = await currentLogin(ctx, apiUrl);
      if (existing) {
        ctx.out.print(`Already logged in to ${apiUrl} as ${whoIs(existing)}.`);
        ctx.out.info(
          `The token is valid ${validity(existing, ctx.now())}. ` +
            "Run `gwcli logout` first to log in as someone else.",
        );
        return;
      }
      const metadata = await fetchMetadata(ctx.http, apiUrl);
      const auth = await requestDeviceCode(ctx.http, metadata);
      const url = auth.verification_uri_complete ?? auth.verification_uri;
      ctx.out.print(
        `To log in, open this page in a browser and check that it shows the code ${auth.user_code}:\n\n` +
          `  ${url}\n\n`,
      );
      const browser = await ctx.openBrowser(url);
      if (browser.opened) ctx.out.info(`Opened the page in your browser (${browser.command}).`);
      else ctx.out.info(`Could not open a browser (${browser.reason}): open the page yourself.`);
      ctx.out.info(
        `Waiting for approval (checking every ${auth.interval} s; the code expires in ${
          formatDuration(auth.expires_in * 1000)
        })...`,
      );
      const token = await pollForToken(
        ctx.http,
        metadata,
        auth,
        { sleep: ctx.sleep, now: ctx.now },
        (s) => ctx.out.debug(1, `${s.error}: next check in ${s.intervalSeconds} s`),
      );
      const store = ctx.store(apiUrl);
      const location = await store.save({
        access_token: token.access_token,
        token_type: "Bearer",
        api_url: apiUrl,
        obtained_at: new Date(ctx.now()).toISOString(),
        source: "device_login",
      });
      let verified: VerifiedUserToken;
      try {
        verified = await verifyUserToken(ctx.http, apiUrl, token.access_token, new Date(ctx.now()));
      } catch (err) {
        await store.clear();
        throw err;
      }
      ctx.out.print(`Logged in to ${apiUrl} as ${whoIs(verified)}.`);
      ctx.out.info(
        `The token is stored in the ${location}, valid ${validity(verified, ctx.now())}.`,
      );
    },
  );
}
