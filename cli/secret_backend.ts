/** A place that keeps one secret string: the OS keychain or the age-encrypted file. */

/** Kinds of secret storage. */
export type BackendKind = "keychain" | "file";

/** One secret store. */
export interface SecretBackend {
  /** Which kind it is. */
  readonly kind: BackendKind;
  /** Where the secret is, for messages (`OS keychain (service gwcli)`, a file path). */
  readonly description: string;
  /** The secret, or null when none is stored. */
  read(): Promise<string | null>;
  /** Stores the secret, replacing any. */
  write(value: string): Promise<void>;
  /**
   * Checks that a later process will read `value` back (the keychain probes from a second
   * process); rejects when it would not. Absent when every write is durable (a file).
   */
  verifyElsewhere?(value: string): Promise<void>;
  /** Removes the secret; true when there was one. */
  remove(): Promise<boolean>;
}
