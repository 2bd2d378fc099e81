/**
 * Secure storage of the user token: the OS keychain when it works, else an age-encrypted file
 * (see `age_file.ts`). The legacy plain-text `auth.json` is moved in on first use and removed.
 *
 * `GWCLI_SECURE_STORE` chooses: `auto` (default: keychain, falling back to the file), `keychain`
 * (fail when the keychain is unavailable) or `file` (never touch the keychain).
 */
import { openAgeFile } from "./age_file.ts";
import { CliError, EXIT } from "./errors.ts";
import type { Env } from "./env.ts";
import { removeIfExists } from "./files.ts";
import { openKeychain } from "./keychain.ts";
import { readLegacyAuth } from "./legacy_auth.ts";
import type { Output } from "./output.ts";
import type { GwcliPaths } from "./paths.ts";
import type { SecretBackend } from "./secret_backend.ts";

/** Environment variable choosing the store. */
export const STORE_ENV = "GWCLI_SECURE_STORE";

/** Store modes. */
export type StoreMode = "auto" | "keychain" | "file";

/** What is stored: the user token and where it came from. */
export interface StoredCredentials {
  /** The user token (RS256 JWT). */
  access_token: string;
  token_type: "Bearer";
  /** The cloud the token was obtained from. */
  api_url: string;
  /** ISO 8601 time it was stored. */
  obtained_at: string;
  /** How it got here. */
  source: "device_login" | "legacy_auth_json";
}

/** Stored credentials with the store holding them. */
export interface LoadedCredentials {
  credentials: StoredCredentials;
  /** Description of the store (`OS keychain …` or `age-encrypted file …`). */
  location: string;
}

/** Reads `GWCLI_SECURE_STORE`. */
export function storeMode(env: Env): StoreMode {
  const value = (env(STORE_ENV) ?? "auto").trim().toLowerCase() || "auto";
  if (value === "auto" || value === "keychain" || value === "file") return value;
  throw new CliError(`${STORE_ENV} must be auto, keychain or file (got ${JSON.stringify(value)})`, {
    exitCode: EXIT.usage,
  });
}

/** Parses stored text; a value that is not ours is reported as such. */
export function parseCredentials(text: string, where: string): StoredCredentials {
  try {
    const o = JSON.parse(text);
    if (typeof o?.access_token === "string" && typeof o?.api_url === "string") {
      return {
        access_token: o.access_token,
        token_type: "Bearer",
        api_url: o.api_url,
        obtained_at: typeof o.obtained_at === "string" ? o.obtained_at : "",
        source: o.source === "legacy_auth_json" ? "legacy_auth_json" : "device_login",
      };
    }
  } catch {
    // fall through
  }
  throw new CliError(`the ${where} holds no gwcli credentials`, {
    exitCode: EXIT.auth,
    hint: "Run `gwcli logout`, then `gwcli login`.",
  });
}

/** Dependencies of the store. */
export interface SecureStoreOptions {
  paths: GwcliPaths;
  env: Env;
  out: Output;
  /** The cloud URL in effect, recorded with a migrated legacy token that names none. */
  apiUrl: string;
  /** Opens the keychain (tests pass a fake); rejects when unavailable. */
  keychain?: () => Promise<SecretBackend>;
}

/** The user token's secure storage. */
export class SecureStore {
  #options: SecureStoreOptions;
  #mode: StoreMode;
  #file: SecretBackend;
  #keychain?: Promise<SecretBackend | Error>;
  #migrated = false;

  constructor(options: SecureStoreOptions) {
    this.#options = options;
    this.#mode = storeMode(options.env);
    this.#file = openAgeFile({
      file: options.paths.credentials,
      identityFile: options.paths.identity,
      env: options.env,
      warn: (text) => options.out.warn(text),
    });
  }

  /** The keychain, or the error that makes it unavailable (opened once). */
  #openKeychain(): Promise<SecretBackend | Error> {
    return this.#keychain ??= (this.#options.keychain ?? (() => openKeychain()))().catch(
      (err: unknown) => err instanceof Error ? err : new Error(String(err)),
    );
  }

  /** The keychain when the mode allows it and it opens; a keychain-mode failure throws. */
  async #keychainBackend(): Promise<SecretBackend | undefined> {
    if (this.#mode === "file") return undefined;
    const k = await this.#openKeychain();
    if (!(k instanceof Error)) return k;
    if (this.#mode === "keychain") {
      throw new CliError(`the OS keychain is unavailable: ${k.message}`, {
        hint: `Unset ${STORE_ENV} (or set it to file) to use the age-encrypted file.`,
      });
    }
    this.#options.out.debug(1, `OS keychain unavailable (${k.message}): using the age file`);
    return undefined;
  }

  /** Reads a backend; in auto mode a keychain read failure counts as empty. */
  async #read(backend: SecretBackend): Promise<string | null> {
    if (backend.kind === "file" || this.#mode === "keychain") return await backend.read();
    try {
      return await backend.read();
    } catch (err) {
      this.#options.out.debug(1, `OS keychain read failed (${(err as Error).message})`);
      return null;
    }
  }

  /** Moves a legacy `auth.json` token into the store (once per process), then removes the file. */
  async #migrate(): Promise<void> {
    if (this.#migrated) return;
    this.#migrated = true;
    const { paths, out } = this.#options;
    const legacy = await readLegacyAuth(paths.legacyAuth);
    if (!legacy.found) return;
    if (!legacy.token) {
      out.warn(`${paths.legacyAuth} holds no token that gwcli can read; it was left in place`);
      return;
    }
    const current = await this.#loadStored();
    if (current) {
      await removeIfExists(paths.legacyAuth);
      out.notice(
        `removed the legacy ${paths.legacyAuth} (a token is already in the ${current.location})`,
      );
      return;
    }
    const location = await this.#write({
      access_token: legacy.token.token,
      token_type: "Bearer",
      api_url: (legacy.token.apiUrl ?? this.#options.apiUrl).replace(/\/+$/, ""),
      obtained_at: (legacy.modified ?? new Date()).toISOString(),
      source: "legacy_auth_json",
    });
    await removeIfExists(paths.legacyAuth);
    out.notice(`moved the token of the legacy ${paths.legacyAuth} to the ${location}`);
  }

  async #loadStored(): Promise<LoadedCredentials | null> {
    const keychain = await this.#keychainBackend();
    for (const backend of keychain ? [keychain, this.#file] : [this.#file]) {
      if (backend === this.#file && this.#mode === "keychain") continue;
      const text = await this.#read(backend);
      if (text !== null) {
        return {
          credentials: parseCredentials(text, backend.description),
          location: backend.description,
        };
      }
    }
    return null;
  }

  async #write(credentials: StoredCredentials): Promise<string> {
    const text = JSON.stringify(credentials);
    const keychain = await this.#keychainBackend();
    if (keychain) {
      try {
        await keychain.write(text);
        await this.#verifyKept(keychain, text);
        await this.#file.remove();
        return keychain.description;
      } catch (err) {
        if (this.#mode === "keychain") {
          throw new CliError(`cannot write to the OS keychain: ${(err as Error).message}`, {
            cause: err,
          });
        }
        this.#options.out.debug(1, `OS keychain write failed (${(err as Error).message})`);
      }
    }
    await this.#file.write(text);
    return this.#file.description;
  }

  /**
   * Checks that the next gwcli process will read what was just written to the keychain. In auto
   * mode a failure removes the entry and says so: the caller then writes the age file.
   */
  async #verifyKept(keychain: SecretBackend, text: string): Promise<void> {
    if (!keychain.verifyElsewhere) return;
    try {
      await keychain.verifyElsewhere(text);
    } catch (err) {
      await keychain.remove().catch(() => false);
      if (this.#mode !== "keychain") {
        this.#options.out.notice(
          `the OS keychain does not keep the token for later gwcli runs (${
            (err as Error).message
          }); using the age-encrypted file instead`,
        );
      }
      throw err;
    }
  }

  /** The stored credentials (after migrating a legacy file), or null when none. */
  async load(): Promise<LoadedCredentials | null> {
    await this.#migrate();
    return await this.#loadStored();
  }

  /** Stores `credentials`; returns where. */
  async save(credentials: StoredCredentials): Promise<string> {
    await this.#migrate();
    return await this.#write(credentials);
  }

  /** Removes the token from every store and the legacy file; returns where one was removed. */
  async clear(): Promise<string[]> {
    const removed: string[] = [];
    if (this.#mode !== "file") {
      const k = await this.#openKeychain();
      if (!(k instanceof Error)) {
        try {
          if (await k.remove()) removed.push(k.description);
        } catch (err) {
          if (this.#mode === "keychain") throw err;
          this.#options.out.debug(1, `OS keychain delete failed (${(err as Error).message})`);
        }
      }
    }
    if (await this.#file.remove()) removed.push(this.#file.description);
    if (await removeIfExists(this.#options.paths.legacyAuth)) {
      removed.push(`legacy file ${this.#options.paths.legacyAuth}`);
    }
    return removed;
  }
}
