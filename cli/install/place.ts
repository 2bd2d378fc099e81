/**
 * Putting one verified release binary in place, for `gateway:install` and `self-update` alike:
 * `SHA256SUMS` checked against its Ed25519 signature, the archive against `SHA256SUMS`, the
 * binary taken out next to the target and renamed over it (a binary already there stays until the
 * new one is complete).
 */
import { CliError } from "../errors.ts";
import type { CliContext } from "../context.ts";
import { ensureDir, parentOf, removeIfExists } from "../files.ts";
import { joinPath } from "../paths.ts";
import { extractBinary } from "./archive.ts";
import { downloadToFile } from "./download.ts";
import { fileSha256 } from "./installed.ts";
import { programBinary, type ReleasePlatform, type ReleaseProgram } from "./platform.ts";
import { expectedChecksum, releaseFiles } from "./release.ts";

/** What to fetch and where it goes. */
export interface PlaceRequest {
  program: ReleaseProgram;
  version: string;
  platform: ReleasePlatform;
  /** The release base URL. */
  base: string;
  /** The trusted release keys. */
  keys: readonly string[];
  /** The binary's final path. */
  target: string;
}

/** What was put in place. */
export interface Placed {
  archiveName: string;
  archiveBytes: number;
  /** SHA-256 of the archive (as SHA256SUMS lists it). */
  sha256: string;
  /** SHA-256 of the binary as placed. */
  binarySha256: string;
}

/** Downloads, verifies and places `program`'s binary of `version` at `target`. */
export async function placeRelease(ctx: CliContext, r: PlaceRequest): Promise<Placed> {
  const files = releaseFiles(r.base, r.version, r.platform, r.program);
  const expected = await expectedChecksum(ctx.http, files, r.keys);
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
    const dir = parentOf(r.target);
    await ensureDir(dir, 0o755);
    const staged = `${r.target}.tmp-${crypto.randomUUID().slice(0, 8)}`;
    let binarySha256: string;
    try {
      const binary = programBinary(r.program, r.platform.os);
      const entry = await extractBinary(archive, r.platform.archive, binary, staged);
      ctx.out.debug(1, `extracted ${entry}`);
      if (r.platform.os !== "windows" && Deno.build.os !== "windows") {
        await Deno.chmod(staged, 0o755);
      }
      binarySha256 = await fileSha256(staged);
      if (Deno.build.os === "windows") {
        // Windows cannot replace a running executable, but it can rename it out of the way.
        await removeIfExists(`${r.target}.old`);
        await Deno.rename(r.target, `${r.target}.old`).catch(() => {});
      }
      await Deno.rename(staged, r.target);
    } finally {
      await removeIfExists(staged);
    }
    return {
      archiveName: files.archiveName,
      archiveBytes: download.bytes,
      sha256: download.sha256,
      binarySha256,
    };
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}
