/**
 * `gateway:install`: resolve the version, download the archive of this OS and CPU, check it against
 * `SHA256SUMS` (itself checked against its Ed25519 signature), take the binary out and put it in
 * place atomically with the executable bit.
 */
import { CliError } from "../errors.ts";
import type { CliContext } from "../context.ts";
import { ensureDir, removeIfExists } from "../files.ts";
import { joinPath } from "../paths.ts";
import { formatBytes } from "../time.ts";
import { extractBinary } from "./archive.ts";
import { downloadToFile } from "./download.ts";
import { defaultInstallDir, onPath, type ReleasePlatform, releasePlatform } from "./platform.ts";
import {
  expectedChecksum,
  releaseBaseUrl,
  releaseFiles,
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
}

/** What was installed. */
export interface Installed {
  version: string;
  platform: ReleasePlatform;
  path: string;
  archiveBytes: number;
  sha256: string;
}

/** Installs a gateway release. */
export async function installGateway(ctx: CliContext, request: InstallRequest): Promise<Installed> {
  const platform = request.platform ?? releasePlatform(Deno.build.os, Deno.build.arch);
  const base = releaseBaseUrl(ctx.env);
  const keys = trustedReleaseKeys(ctx.env);
  let version = request.version;
  if (version === "latest") {
    version = await resolveLatest(ctx.http, base);
    ctx.out.info(`The latest release is ${version}.`);
  }
  const files = releaseFiles(base, version, platform);
  const expected = await expectedChecksum(ctx.http, files, keys);
  const dir = request.dir ?? defaultInstallDir(platform.os, ctx.env);
  const work = await Deno.makeTempDir({ prefix: "gwcli-install-" });
  try {
    ctx.out.info(`Downloading ${files.archiveName}...`);
    const archive = joinPath(work, files.archiveName);
    const download = await downloadToFile(ctx.fetch, ctx.out, files.archiveUrl, archive);
    if (download.sha256 !== expected) {
      throw new CliError(
        `checksum mismatch for ${files.archiveName}: SHA256SUMS says ${expected}, ` +
          `the download is ${download.sha256}; nothing was installed`,
        { hint: "Try again; if it persists, the release or a proxy on the way is broken." },
      );
    }
    ctx.out.debug(1, `sha256 ${download.sha256} matches SHA256SUMS`);
    await ensureDir(dir, 0o755);
    const target = joinPath(dir, platform.binary);
    const staged = `${target}.tmp-${crypto.randomUUID().slice(0, 8)}`;
    try {
      const entry = await extractBinary(archive, platform.archive, platform.binary, staged);
      ctx.out.debug(1, `extracted ${entry}`);
      if (platform.os !== "windows" && Deno.build.os !== "windows") await Deno.chmod(staged, 0o755);
      await Deno.rename(staged, target);
    } finally {
      await removeIfExists(staged);
    }
    return {
      version,
      platform,
      path: target,
      archiveBytes: download.bytes,
      sha256: download.sha256,
    };
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
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
