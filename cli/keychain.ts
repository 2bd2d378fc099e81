/**
 * The OS keychain through `@napi-rs/keyring` (macOS Keychain, Windows Credential Manager, the
 * Secret Service on Linux desktops). Loaded on demand: when the native module or the platform
 * store is unavailable (headless Linux, containers), callers fall back to the age-encrypted file.
 *
 * On Linux the entry is pinned to the Secret Service. The module's default would otherwise fall
 * back to the kernel keyring, which lives in memory, per login session: a token written there
 * is gone for the next SSH session or after a reboot, so it is no place for a login.
 */
import { digestOf, readDigestInAnotherProcess } from "./keychain_probe.ts";
import type { SecretBackend } from "./secret_backend.ts";

/** Keychain service name of gwcli's entries. */
export const KEYCHAIN_SERVICE = "gwcli";
/** Keychain account of the user token. */
export const KEYCHAIN_ACCOUNT = "user-token";

/** The part of `@napi-rs/keyring`'s `Entry` that gwcli uses. */
interface KeyringEntry {
  getPassword(): string | null | undefined;
  setPassword(password: string): void;
  deletePassword(): boolean;
}

/** Opens the keychain entry; an error (module or platform store missing) means unavailable. */
export async function openKeychain(
  service = KEYCHAIN_SERVICE,
  account = KEYCHAIN_ACCOUNT,
): Promise<SecretBackend> {
  const { Entry } = await import("@napi-rs/keyring");
  const entry: KeyringEntry = new Entry(service, account, { linux: { store: "secret-service" } });
  return {
    kind: "keychain",
    description: `OS keychain (service ${service}, account ${account})`,
    read: () => Promise.resolve(entry.getPassword() ?? null),
    write: (value) => {
      entry.setPassword(value);
      // Some platform stores accept a write they cannot keep; read it back to be sure.
      if (entry.getPassword() !== value) {
        throw new Error("the keychain did not keep the value written to it");
      }
      return Promise.resolve();
    },
    verifyElsewhere: async (value) => {
      const seen = await readDigestInAnotherProcess(service, account);
      if (seen instanceof Error) throw seen;
      if (seen !== await digestOf(value)) {
        throw new Error("a second gwcli process does not see the value written to the keychain");
      }
    },
    remove: () => Promise.resolve(entry.deletePassword()),
  };
}
