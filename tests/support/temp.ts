/** Temporary directories for test processes. */

/** Creates a fresh temporary directory (mode 0755, so nginx workers may enter it) and returns its path. */
export async function tempDir(prefix = "gw-test-"): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  await Deno.chmod(dir, 0o755);
  return dir;
}

/** Removes a directory tree, ignoring one that is already gone. */
export async function removeDir(dir: string): Promise<void> {
  try {
    await Deno.remove(dir, { recursive: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
