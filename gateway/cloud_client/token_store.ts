/**
 * The machine token the gateway holds: in memory always, and with `GATEWAY_ENCRYPTION_KEY` also in
 * the age-encrypted state file, so it survives a restart. Without the key a restart loses it
 * (SPEC, Errors). The token text is never logged.
 */
import type { Logger } from "../../shared/mod.ts";
import type { MachineTokenPayload } from "../../shared/mod.ts";
import type { EncryptionKey } from "./encryption_key.ts";
import { readTokenFile, removeTokenFile, tokenFilePath, writeTokenFile } from "./token_file.ts";

/** Where the held token came from. */
export type TokenSource = "environment" | "state_file" | "management_api" | "authorize" | "renewal";

/** The token held now. */
export interface HeldToken {
  payload: MachineTokenPayload;
  source: TokenSource;
  /** True once checked with the cloud (signature, issuer, revocation). */
  verified: boolean;
  /** True when it is in the encrypted state file (survives a restart). */
  persisted: boolean;
}

/** Holds one machine token; persists it when an encryption key is set. */
export class MachineTokenStore {
  readonly #key: EncryptionKey | undefined;
  readonly #logger: Logger;
  #file: string | undefined;
  #held: HeldToken | undefined;
  #listeners = new Set<() => void>();

  constructor(key: EncryptionKey | undefined, logger: Logger) {
    this.#key = key;
    this.#logger = logger;
  }

  /** True when tokens are written to the state file. */
  get persistent(): boolean {
    return this.#key !== undefined && this.#file !== undefined;
  }

  /** The held token, if any. */
  get current(): HeldToken | undefined {
    return this.#held;
  }

  /** Calls `listener` whenever the held token changes. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Uses the state file of `stateDir` from now on and answers the token in it (not yet held;
   * the caller decides). Without a key nothing is read; a file it cannot use is reported.
   */
  async open(stateDir: string): Promise<MachineTokenPayload | undefined> {
    this.#file = tokenFilePath(stateDir);
    this.#held = undefined;
    if (!this.#key) {
      try {
        await Deno.stat(this.#file);
        this.#logger.warn(
          "a machine-token state file exists but GATEWAY_ENCRYPTION_KEY is not set: it is not read",
          { file: this.#file },
        );
      } catch {
        // no file: nothing to say
      }
      return undefined;
    }
    const read = await readTokenFile(this.#file, this.#key);
    if (read.kind === "unusable") {
      this.#logger.error("the machine-token state file cannot be used; it is ignored", {
        file: this.#file,
        reason: read.reason,
      });
      return undefined;
    }
    return read.kind === "token" ? read.payload : undefined;
  }

  /** Holds `payload` (and writes it to the state file when there is a key). */
  async set(
    payload: MachineTokenPayload,
    source: TokenSource,
    verified: boolean,
  ): Promise<HeldToken> {
    let persisted = false;
    if (this.#key && this.#file) {
      try {
        await writeTokenFile(this.#file, this.#key, payload);
        persisted = true;
      } catch (err) {
        this.#logger.error(
          "cannot write the machine-token state file: the token is held in memory only " +
            "and is lost on restart (set [cloud] state_dir to a writable directory)",
          { file: this.#file, error: (err as Error).message },
        );
      }
    }
    this.#held = { payload, source, verified, persisted };
    this.#emit();
    return this.#held;
  }

  /** Marks the held token as checked with the cloud. */
  markVerified(token: string): void {
    if (this.#held && this.#held.payload.machine_token === token) this.#held.verified = true;
  }

  /** Drops the held token and its state file. */
  async clear(): Promise<void> {
    this.#held = undefined;
    if (this.#file) {
      await removeTokenFile(this.#file).catch((err) =>
        this.#logger.error("cannot remove the machine-token state file", {
          file: this.#file,
          error: (err as Error).message,
        })
      );
    }
    this.#emit();
  }

  #emit(): void {
    for (const l of this.#listeners) {
      try {
        l();
      } catch (err) {
        this.#logger.error("token change listener failed", { error: err as Error });
      }
    }
  }
}
