/** Real peers (Debian programs) that tests run against: find them, skip or fail without them. */

/** Directories searched after PATH (sbin is not on every user's PATH). */
const EXTRA_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/** True when running under CI (`CI=true` or `CI=1`), where peer tests must not be skipped. */
export function isCi(): boolean {
  const value = Deno.env.get("CI")?.toLowerCase();
  return value === "true" || value === "1";
}

/** Absolute path of an executable named `binary` on PATH or in the sbin/bin directories. */
export function findBinary(binary: string): string | undefined {
  const candidates = binary.includes("/") ? [binary] : [
    ...(Deno.env.get("PATH") ?? "").split(":").filter((dir) => dir !== ""),
    ...EXTRA_DIRS,
  ].map((dir) => `${dir}/${binary}`);
  for (const path of candidates) {
    try {
      const info = Deno.statSync(path);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** What to do with a peer test: run it, or skip (with a message), or fail (with an error). */
export type PeerDecision =
  | { action: "run"; path: string }
  | { action: "skip"; message: string }
  | { action: "fail"; error: Error };

/** Decides, without side effects, what a test needing `binary` does given where it was found. */
export function decidePeer(
  name: string,
  binary: string,
  aptPackage: string,
  found: string | undefined,
  ci: boolean,
): PeerDecision {
  if (found !== undefined) return { action: "run", path: found };
  const missing = `${name} needs '${binary}', which is missing: ` +
    `install the Debian package '${aptPackage}' (apt-get install ${aptPackage})`;
  if (ci) {
    return { action: "fail", error: new Error(`${missing}; CI=true does not allow skipping it`) };
  }
  return { action: "skip", message: `skipping ${missing}` };
}

/**
 * True when `binary` is installed. Missing: skipped (prints a message naming `aptPackage`,
 * returns false) or, under CI=true, throws so the run fails. Use as
 * `Deno.test({ name, ignore: !requirePeer("nginx", "nginx", "nginx-light"), fn })`.
 */
export function requirePeer(name: string, binary: string, aptPackage: string): boolean {
  const decision = decidePeer(name, binary, aptPackage, findBinary(binary), isCi());
  if (decision.action === "fail") throw decision.error;
  if (decision.action === "skip") {
    console.warn(decision.message);
    return false;
  }
  return true;
}

/** Alias of {@link requirePeer}, read naturally in `ignore: !hasPeer(...)`. */
export const hasPeer: typeof requirePeer = requirePeer;
