/**
 * `gateway:install`: resolve the version (from the signed index for `latest`), refuse a downgrade
 * of the gateway already at the target unless asked for, download the archive of this OS and CPU,
 * check it against `SHA256SUMS` (itself checked against its Ed25519 signature), take the binary
 * out, put it in place atomically with the executable bit, and remember its version.
 */
import { CliError, usageError } from "../errors.ts";
import type { CliContext } from "../context.ts";
import { joinPath } from "../paths.ts";
import { formatBytes } from "../time.ts";
import { checkDowngrade } from "./downgrade.ts";
import { INSTALLS_FILE, presentGateway, recordInstall } from "./installed.ts";
import { placeRelease } from "./place.ts";
import { defaultInstallDir, onPath, type ReleasePlatform, releasePlatform } from "./platform.ts";
import {
  latestIndexUrl,
  releaseBaseUrl,
  requireTrustedKeys,
  resolveLatest,
  trustedReleaseKeys,
} from "./release.ts";

/** What to install. */
export interface InstallRequest {
  /** A release version or `latest`. */
  version: string;
  /** Target directory; the platform default when undefined. */
  dir?: string;
  /** The platform (tests); `Deno.build` when undefined. */
  platform?: ReleasePlatform;
  /** Replace a newer gateway at the target with the named older `version`. */
  allowDowngrade?: boolean;
}

/** What was installed. */
export interface Installed {
  version: string;
  platform: ReleasePlatform;
  path: string;
  archiveBytes: number;
  sha256: string;
}

/** `installs.json` in gwcli's data directory, or null when there is none (no home directory). */
export function installsRegistry(ctx: CliContext): string | null {
  try {
    return joinPath(ctx.paths.dir, INSTALLS_FILE);
  } catch (err) {
    if (err instanceof CliError) return null;
    throw err;
  }
}

/**
 * What every install from the release site starts with: the request's flags checked, the
 * platform, the site and the trusted keys (at least one, else the install stops here).
 */
export function releaseSource(
  ctx: CliContext,
  request: { version: string; allowDowngrade?: boolean; platform?: ReleasePlatform },
): { platform: ReleasePlatform; base: string; keys: ReturnType<typeof trustedReleaseKeys> } {
  if (request.allowDowngrade && request.version === "latest") {
    throw usageError(
      "--allow-downgrade needs --version: name the older release you mean to install",
    );
  }
  const platform = request.platform ?? releasePlatform(Deno.build.os, Deno.build.arch);
  const base = releaseBaseUrl(ctx.env);
  const keys = trustedReleaseKeys(ctx.env);
  requireTrustedKeys(keys);
  return { platform, base, keys };
}

/** Installs a gateway release. */
export async function installGateway(ctx: CliContext, request: InstallRequest): Promise<Installed> {
  const { platform, base, keys } = releaseSource(ctx, request);
  const dir = request.dir ?? defaultInstallDir(platform.os, ctx.env);
  const target = joinPath(dir, platform.binary);
  let version = request.version;
  const fromIndex = version === "latest" ? latestIndexUrl(base) : null;
  if (version === "latest") {
    version = await resolveLatest(ctx.http, base, keys);
    ctx.out.info(`The latest release is ${version}.`);
  }
  const registry = installsRegistry(ctx);
  const present = await presentGateway(registry, target);
  const note = checkDowngrade({
    version,
    present,
    target,
    fromIndex,
    allowDowngrade: request.allowDowngrade ?? false,
  });
  if (note) ctx.out.info(note);
  if (present.kind === "unknown") {
    ctx.out.notice(
      `${target} was not installed by gwcli, or changed since: its version is unknown, ` +
        "so it is replaced without the downgrade check",
    );
  }
  const placed = await placeRelease(ctx, {
    program: "gateway",
    version,
    platform,
    base,
    keys,
    target,
  });
  if (registry) {
    try {
      await recordInstall(registry, target, version, placed.binarySha256, ctx.now());
    } catch (err) {
      // The gateway is in place; only the next install's downgrade check loses its reference.
      ctx.out.warn(`cannot record the installed version in ${registry}: ${(err as Error).message}`);
    }
  }
  return {
    version,
    platform,
    path: target,
    archiveBytes: placed.archiveBytes,
    sha256: placed.sha256,
  };
}

/** The report line of an installation, and a PATH hint when needed. */
export function reportInstall(ctx: CliContext, installed: Installed, dir: string): void {
  const p = installed.platform;
  ctx.out.print(
    `Installed gateway ${installed.version} (${p.os} ${p.arch}) to ${installed.path} ` +
      `(${formatBytes(installed.archiveBytes)} archive, signature and checksum verified).`,
  );
  if (!onPath(dir, ctx.env, p.os)) {
    ctx.out.info(`${dir} is not on your PATH: add it, or run ${installed.path} directly.`);
  }
}
