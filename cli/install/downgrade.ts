/**
 * The downgrade rule of `gateway:install` and `self-update`: a release older than the one at the
 * target is installed only when the user names it (`--version`) and says so
 * (`--allow-downgrade`). Every old release stays validly signed, so a signature alone cannot stop
 * a mirror that offers one as the latest.
 */
import { CliError } from "../errors.ts";
import type { PresentGateway } from "./installed.ts";
import { compareVersions } from "./semver.ts";

/** The facts the rule looks at. */
export interface DowngradeCheck {
  /** The version about to be installed. */
  version: string;
  present: PresentGateway;
  /** The binary's path, for messages. */
  target: string;
  /** The index URL when `version` came from `latest`; null when the user named it. */
  fromIndex: string | null;
  allowDowngrade: boolean;
  /** What is installed, for messages (default `gateway`). */
  program?: string;
  /** The command that installs it, for hints (default `gwcli gateway:install`). */
  command?: string;
}

/**
 * Throws when `version` is older than the known version at the target and the downgrade was not
 * asked for; returns a line to show when an asked-for downgrade goes ahead, else null.
 */
export function checkDowngrade(c: DowngradeCheck): string | null {
  if (c.present.kind !== "known") return null;
  const installed = c.present.version;
  const program = c.program ?? "gateway";
  const command = c.command ?? "gwcli gateway:install";
  if (compareVersions(c.version, installed) >= 0) return null;
  if (c.fromIndex) {
    throw new CliError(
      `the release index ${c.fromIndex} names ${c.version}, older than ${program} ${installed} ` +
        `at ${c.target}; nothing was installed`,
      {
        hint: "A mirror may be offering an old release as the latest. To go back on purpose: " +
          `${command} --version ${c.version} --allow-downgrade`,
      },
    );
  }
  if (!c.allowDowngrade) {
    throw new CliError(
      `${program} ${installed} at ${c.target} is newer than ${c.version}; nothing was installed`,
      { hint: "To install the older release on purpose, add --allow-downgrade." },
    );
  }
  return `Replacing ${program} ${installed} with the older ${c.version} (--allow-downgrade).`;
}
