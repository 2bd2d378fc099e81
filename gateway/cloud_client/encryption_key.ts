/**
 * `GATEWAY_ENCRYPTION_KEY` (SPEC, Authentication 5): an age X25519 identity, the secret key the
 * machine-token state file is encrypted to. Accepted forms: the identity base64-encoded (what
 * SPEC describes; also the base64 of a whole `age-keygen` key file), or the identity itself
 * (`AGE-SECRET-KEY-1…`). Anything else is refused with a message that says what was expected;
 * the message never contains the value.
 */

/** Name of the environment variable. */
export const ENCRYPTION_KEY_ENV = "GATEWAY_ENCRYPTION_KEY";

/** A usable key: the identity (decrypts) and its recipient (encrypts). */
export interface EncryptionKey {
  /** `AGE-SECRET-KEY-1…` (secret: never log it). */
  identity: string;
  /** `age1…`, the public half. */
  recipient: string;
}

/** `GATEWAY_ENCRYPTION_KEY` holds something that is not an age X25519 identity. */
export class EncryptionKeyError extends Error {
  constructor(reason: string) {
    super(
      `${ENCRYPTION_KEY_ENV} is not usable: ${reason}. Expected an age X25519 identity ` +
        "(AGE-SECRET-KEY-1…), base64-encoded or as it is; make one with " +
        "`age-keygen | base64 -w0`",
    );
    this.name = "EncryptionKeyError";
  }
}

const IDENTITY = /^AGE-SECRET-KEY-1[0-9A-Z]+$/;

/** Parses the variable's value into a key; throws EncryptionKeyError when it is not one. */
export async function parseEncryptionKey(value: string): Promise<EncryptionKey> {
  const text = value.trim();
  if (text === "") throw new EncryptionKeyError("it is empty");
  const identity = text.startsWith("AGE-SECRET-KEY-")
    ? identityIn(text)
    : identityIn(unbase64(text));
  if (identity.startsWith("AGE-SECRET-KEY-PQ-")) {
    throw new EncryptionKeyError("it is a post-quantum (PQ) identity; use an X25519 one");
  }
  if (!IDENTITY.test(identity)) {
    throw new EncryptionKeyError("no AGE-SECRET-KEY-1… identity in it");
  }
  // age loads on first use: most processes that import the gateway never need it.
  const { identityToRecipient } = await import("age-encryption");
  let recipient: string;
  try {
    recipient = await identityToRecipient(identity);
  } catch {
    throw new EncryptionKeyError("the identity does not decode (bad checksum or length)");
  }
  return { identity, recipient };
}

/** The one identity line of an identity or key-file text (comments and blank lines skipped). */
function identityIn(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) =>
    l !== "" && !l.startsWith("#")
  );
  if (lines.length !== 1) {
    throw new EncryptionKeyError(
      lines.length === 0 ? "no AGE-SECRET-KEY-1… identity in it" : "it holds more than one line",
    );
  }
  return lines[0];
}

function unbase64(text: string): string {
  const compact = text.replace(/\s+/g, "").replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    throw new EncryptionKeyError("it is neither an AGE-SECRET-KEY-1… identity nor base64");
  }
  let binary: string;
  try {
    binary = atob(compact.padEnd(compact.length + (4 - compact.length % 4) % 4, "="));
  } catch {
    throw new EncryptionKeyError("it is not valid base64");
  }
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new EncryptionKeyError("its base64 does not decode to text");
  }
}
