/**
 * What `gateway:install` put where: `installs.json` in gwcli's data directory maps each installed
 * binary (its real path) to the release version and the SHA-256 of the binary. A binary that no
 * longer has that hash was replaced by something else since, so its version is unknown.
 */
import { createHash } from "node:crypto";
import { readTextIfExists, writeFileAtomic } from "../files.ts";

/** File name of the record in gwcli's data directory. */
export const INSTALLS_FILE = "installs.json";

/** One installed binary. */
export interface InstallRecord {
  version: string;
  /** SHA-256 (hex) of the binary as installed. */
  sha256: string;
  installed_at: string;
}

/** What is at an install target now. */
export type PresentGateway =
  | { kind: "none" }
  | { kind: "known"; version: string }
  /** A file gwcli did not install there, or that changed since. */
  | { kind: "unknown" };

interface InstallsFile {
  version: 1;
  installs: Record<string, InstallRecord>;
}

/** SHA-256 (hex) of the file at `path`, read as a stream. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  using file = await Deno.open(path, { read: true });
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}

async function load(registry: string): Promise<InstallsFile> {
  const text = await readTextIfExists(registry);
  if (text === undefined) return { version: 1, installs: {} };
  try {
    const parsed = JSON.parse(text);
    if (parsed?.version === 1 && typeof parsed.installs === "object" && parsed.installs) {
      return parsed as InstallsFile;
    }
  } catch {
    // unreadable: treated as empty, so every present binary is of unknown version
  }
  return { version: 1, installs: {} };
}

/** The file at `target`, if any, and its version when `registry` knows it. */
export async function presentGateway(
  registry: string | null,
  target: string,
): Promise<PresentGateway> {
  let real: string;
  try {
    real = await Deno.realPath(target);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { kind: "none" };
    throw err;
  }
  if (!registry) return { kind: "unknown" };
  const record = (await load(registry)).installs[real];
  if (!record || typeof record.version !== "string") return { kind: "unknown" };
  return record.sha256 === await fileSha256(real)
    ? { kind: "known", version: record.version }
    : { kind: "unknown" };
}

/** Remembers that `version`, whose binary hashes to `sha256`, is now at `target`. */
export async function recordInstall(
  registry: string,
  target: string,
  version: string,
  sha256: string,
  now: number,
): Promise<void> {
  const file = await load(registry);
  file.installs[await Deno.realPath(target)] = {
    version,
    sha256,
    installed_at: new Date(now).toISOString(),
  };
  await writeFileAtomic(registry, JSON.stringify(file, null, 2) + "\n");
}
