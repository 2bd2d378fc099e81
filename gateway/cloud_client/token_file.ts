/**
 * The machine-token state file: the SPEC payload as JSON, encrypted with age to the recipient of
 * `GATEWAY_ENCRYPTION_KEY` (the same format as the `age` tool, so `age -d -i key.txt` reads it),
 * written atomically with mode 0600.
 */
import { join } from "node:path";
import { checkMachineTokenPayload, type MachineTokenPayload } from "../../shared/mod.ts";
import { removeIfExists, writeFileAtomic } from "../../shared/mod.ts";
import type { EncryptionKey } from "./encryption_key.ts";

/** File name of the encrypted token in the state directory. */
export const TOKEN_FILE_NAME = "machine-token.age";

/** Path of the token file in `stateDir`. */
export function tokenFilePath(stateDir: string): string {
  return join(stateDir, TOKEN_FILE_NAME);
}

/** Encrypts the payload to the key's recipient and writes it atomically. */
export async function writeTokenFile(
  path: string,
  key: EncryptionKey,
  payload: MachineTokenPayload,
): Promise<void> {
  const { Encrypter } = await import("age-encryption");
  const e = new Encrypter();
  e.addRecipient(key.recipient);
  const sealed = await e.encrypt(JSON.stringify(payload));
  await writeFileAtomic(path, sealed, { mode: 0o600 });
}

/** What reading the token file found. */
export type TokenFileRead =
  | { kind: "missing" }
  | { kind: "token"; payload: MachineTokenPayload }
  /** The file exists but cannot be used: wrong key, damaged, or not a token (the reason says). */
  | { kind: "unusable"; reason: string };

/** Reads and decrypts the token file; the payload's shape is checked (expiry is the caller's). */
export async function readTokenFile(path: string, key: EncryptionKey): Promise<TokenFileRead> {
  let sealed: Uint8Array;
  try {
    sealed = await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { kind: "missing" };
    return { kind: "unusable", reason: `cannot read it: ${(err as Error).message}` };
  }
  let text: string;
  try {
    const { Decrypter } = await import("age-encryption");
    const d = new Decrypter();
    d.addIdentity(key.identity);
    text = await d.decrypt(sealed, "text");
  } catch (err) {
    return {
      kind: "unusable",
      reason: `cannot decrypt it with ${"GATEWAY_ENCRYPTION_KEY"} (${(err as Error).message})`,
    };
  }
  // Expiry is judged by the caller (an expired token is reported as such, not as damage).
  const check = checkMachineTokenPayload(text, 0);
  if (!check.ok) return { kind: "unusable", reason: `not a machine token: ${check.problems[0]}` };
  return { kind: "token", payload: check.payload };
}

/** Removes the token file (a missing one is fine). */
export async function removeTokenFile(path: string): Promise<void> {
  await removeIfExists(path);
}
