/**
 * Installing gateway releases (`gwcli gateway:install`).
 *
 * @module
 */
export { type Installed, installGateway, type InstallRequest, reportInstall } from "./install.ts";
export {
  defaultInstallDir,
  onPath,
  type ReleaseArch,
  type ReleaseOs,
  type ReleasePlatform,
  releasePlatform,
} from "./platform.ts";
export {
  DEFAULT_RELEASE_URL,
  latestIndexUrl,
  parseChecksums,
  parseVersion,
  RELEASE_URL_ENV,
  releaseBaseUrl,
  releaseFiles,
} from "./release.ts";
export { baseName, extractBinary } from "./archive.ts";
export { extractTarEntry, type TarEntry } from "./tar.ts";
