/** Locations inside the repository. */

/** Absolute path of the repository root (two levels above this folder). */
export const REPO_ROOT: string = decodeURIComponent(new URL("../../", import.meta.url).pathname)
  .replace(/\/$/, "");
