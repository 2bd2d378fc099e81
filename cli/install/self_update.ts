/**
 * `gwcli self-update`: gwcli replaces its own executable with a release, through exactly the path
 * of `gateway:install`: the signed index for `latest`, the signed `SHA256SUMS`, the archive's
 * checksum (place.ts), and the same downgrade rule (downgrade.ts) against the version at the
 * target: this gwcli's own version when the target is the running executable, else the version
 * gwcli recorded there (`installs.json`). gwcli run from source (`deno task gwcli`) has no
 * executable to replace: it needs `--path`.
 */
import { CliError, usageError } from "../errors.ts";
import type { CliContext } from "../context.ts";
import { GWCLI_VERSION } from "../version.ts";
import { checkDowngrade } from "./downgrade.ts";
import { installsRegistry, releaseSource } from "./install.ts";
import { type PresentGateway, presentGateway, recordInstall } from "./installed.ts";
import { placeRelease } from "./place.ts";
import type { ReleasePlatform } from "./platform.ts";
import { latestIndexUrl, resolveLatest } from "./release.ts";

/** What `self-update` was asked. */
export interface SelfUpdateRequest {
  /** A release version or `latest`. */
  version: string;
  /** The gwcli executable to replace; the running one when undefined. */
  path?: string;
  allowDowngrade?: boolean;
  /** Asks before replacing (a terminal without -y); true goes ahead. */
  confirm?: (question: string) => Promise<boolean>;
  /** The platform (tests); `Deno.build` when undefined. */
  platform?: ReleasePlatform;
}

/** What happened. */
export interface SelfUpdated {
  /** The version at the target before (null: unknown or none). */
  from: string | null;
  version: string;
  path: string;
  /** False when the target already had this version: nothing was downloaded. */
  changed: boolean;
  archiveBytes: number;
}

/** The executable of this gwcli, or a usage error when it runs from source. */
function runningExecutable(): string {
  if (!Deno.build.standalone) {
    throw usageError(
      "this gwcli runs from source (deno task gwcli): there is no gwcli executable to replace",
      "Update the checkout (git pull) instead, or pass --path FILE to install a gwcli " +
        "executable there.",
    );
  }
  return Deno.execPath();
}

/** The real path of `path`, or `path` when it does not exist. */
async function realOrSelf(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

/** Replaces the gwcli executable with the release `request.version` names. */
export async function selfUpdate(
  ctx: CliContext,
  request: SelfUpdateRequest,
): Promise<SelfUpdated> {
  const { platform, base, keys } = releaseSource(ctx, request);
  const target = await realOrSelf(request.path ?? runningExecutable());
  const running = Deno.build.standalone && target === await realOrSelf(Deno.execPath());
  const registry = installsRegistry(ctx);
  // The running executable is this gwcli's version; another file, what gwcli recorded there.
  const present: PresentGateway = running
    ? { kind: "known", version: GWCLI_VERSION }
    : await presentGateway(registry, target);
  let version = request.version;
  const fromIndex = version === "latest" ? latestIndexUrl(base) : null;
  if (version === "latest") {
    version = await resolveLatest(ctx.http, base, keys);
    ctx.out.info(`The latest release is ${version}.`);
  }
  const from = present.kind === "known" ? present.version : null;
  if (from === version) {
    return { from, version, path: target, changed: false, archiveBytes: 0 };
  }
  const note = checkDowngrade({
    version,
    present,
    target,
    fromIndex,
    allowDowngrade: request.allowDowngrade ?? false,
    program: "gwcli",
    command: "gwcli self-update",
  });
  if (note) ctx.out.info(note);
  if (present.kind === "unknown") {
    ctx.out.notice(
      `${target} was not installed by gwcli self-update, or changed since: its version is ` +
        "unknown, so it is replaced without the downgrade check",
    );
  }
  const question = `Replace gwcli ${from ?? "(unknown version)"} at ${target} with ${version}?`;
  if (request.confirm && !(await request.confirm(question))) {
    throw new CliError("self-update cancelled; nothing was changed");
  }
  const placed = await placeRelease(ctx, {
    program: "gwcli",
    version,
    platform,
    base,
    keys,
    target,
  });
  if (registry) {
    await recordInstall(registry, target, version, placed.binarySha256, ctx.now()).catch((err) =>
      ctx.out.warn(`cannot record the installed version in ${registry}: ${(err as Error).message}`)
    );
  }
  return { from, version, path: target, changed: true, archiveBytes: placed.archiveBytes };
}
