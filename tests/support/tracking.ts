/**
 * Helpers of the message tracking tests: an age identity file, the `[tracking]` table pointing at
 * it, and a wait for a tracked record to be written (the store is written in batches).
 */
import { generateX25519Identity } from "age-encryption";
import { waitFor } from "./wait.ts";

/** Writes a fresh age identity (`age-keygen` format, 0600) to `<dir>/tracking.age`; its path. */
export async function writeTrackingIdentity(dir: string): Promise<string> {
  const identity = await generateX25519Identity();
  const path = `${dir}/tracking.age`;
  await Deno.writeTextFile(path, `# created for a test\n${identity}\n`, { mode: 0o600 });
  return path;
}

/** A `[tracking]` table: the store under `<dir>/tracking-store`, written every 20 ms. */
export function trackingTable(dir: string, identityFile: string, extra = ""): string {
  return `
[tracking]
path = "${dir}/tracking-store"
identity_file = "${identityFile}"
flush_interval_ms = 20
${extra}
`;
}

/** Waits until `search` (a management search) finds `count` messages; returns them. */
export async function waitForTracked<T>(
  search: () => Promise<T[]>,
  count = 1,
  description = `${count} tracked message(s)`,
): Promise<T[]> {
  let found: T[] = [];
  await waitFor(async () => (found = await search()).length >= count, {
    timeoutMs: 10_000,
    description,
  });
  return found;
}
