/**
 * Installing gateway releases (`gwcli gateway:install`) and gwcli's own (`gwcli self-update`).
 *
 * @example
 * ```ts
 * import { compareVersions, parseChecksums, parseVersion, releasePlatform } from "./mod.ts";
 *
 * console.log(releasePlatform("linux", "x86_64").archive); // tar.gz
 * console.log(parseVersion("v0.12.0")); // 0.12.0
 * console.log(compareVersions("0.12.0-rc.1", "0.12.0") < 0); // true
 * const sums = parseChecksums(`${"ab".repeat(32)}  gateway-linux-x86_64.tar.gz`);
 * console.log(sums.get("gateway-linux-x86_64.tar.gz")?.length); // 64
 * ```
 *
 * @module
 */
export { type Installed, installGateway, type InstallRequest, reportInstall } from "./install.ts";
export { checkDowngrade, type DowngradeCheck } from "./downgrade.ts";
export { type Placed, placeRelease, type PlaceRequest } from "./place.ts";
export { selfUpdate, type SelfUpdated, type SelfUpdateRequest } from "./self_update.ts";
export {
  fileSha256,
  type InstallRecord,
  INSTALLS_FILE,
  type PresentGateway,
  presentGateway,
  recordInstall,
} from "./installed.ts";
export { compareVersions } from "./semver.ts";
export {
  defaultInstallDir,
  onPath,
  programBinary,
  type ReleaseArch,
  type ReleaseOs,
  type ReleasePlatform,
  releasePlatform,
  type ReleaseProgram,
} from "./platform.ts";
export {
  DEFAULT_RELEASE_URL,
  latestIndexUrl,
  latestSignatureUrl,
  parseChecksums,
  parseVersion,
  RELEASE_KEY_ENV,
  RELEASE_PUBLIC_KEYS,
  RELEASE_URL_ENV,
  releaseBaseUrl,
  releaseFiles,
  requireTrustedKeys,
  trustedReleaseKeys,
} from "./release.ts";
export { baseName, extractBinary } from "./archive.ts";
export { extractTarEntry, type TarEntry } from "./tar.ts";
