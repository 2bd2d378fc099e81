/**
 * The headless fallback of the secure store: the secret in an age file (X25519 recipient, the
 * format of the reference `age` tool), written atomically with mode 0600.
 *
 * The identity (private key) comes from `GWCLI_ENCRYPTION_KEY` when set (an `AGE-SECRET-KEY-1…`
 * string, or that string base64-encoded), else from `identity.txt` beside the file, created with
 * mode 0600 on first use in `age-keygen` format. What this protects against is written in
 * docs/cli.md ("Secure storage"): with the identity file on the same disk, the encryption keeps
 * the token out of reach of tools and backups that copy `credentials.age` alone, not of someone
 * who can read the whole directory as the user.
 */
import { Decrypter, Encrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import { CliError, EXIT } from "./errors.ts";
import type { Env } from "./env.ts";
import {
  ensureDir,
  exists,
  FILE_MODE,
  isGroupOrWorldAccessible,
  parentOf,
  readTextIfExists,
  removeIfExists,
  writeFileAtomic,
} from "./files.ts";
import type { SecretBackend } from "./secret_backend.ts";

/** Environment variable holding the age identity instead of `identity.txt`. */
export const ENCRYPTION_KEY_ENV = "GWCLI_ENCRYPTION_KEY";

const SECRET_KEY_LINE = /^AGE-SECRET-KEY-1[0-9A-Z]+$/;

/** Where an identity came from, for messages. */
export interface IdentitySource {
  identity: string;
  description: string;
}

/** The `AGE-SECRET-KEY-1…` line of `text` (an identity file or a bare key), or undefined. */
export function findSecretKey(text: string): string | undefined {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("#") || line === "") continue;
    if (SECRET_KEY_LINE.test(line.toUpperCase())) return line.toUpperCase();
  }
  return undefined;
}

/** Reads `GWCLI_ENCRYPTION_KEY`: a bare identity, or one base64-encoded; undefined when unset. */
export function identityFromEnv(env: Env): IdentitySource | undefined {
  const value = env(ENCRYPTION_KEY_ENV)?.trim();
  if (!value) return undefined;
  let identity = findSecretKey(value);
  if (!identity) {
    try {
      identity = findSecretKey(new TextDecoder().decode(
        Uint8Array.from(atob(value), (c) => c.charCodeAt(0)),
      ));
    } catch {
      // not base64
    }
  }
  if (!identity) {
    throw new CliError(
      `${ENCRYPTION_KEY_ENV} is not an age identity: use an AGE-SECRET-KEY-1… string ` +
        "(age-keygen) or its base64 encoding",
      { exitCode: EXIT.usage },
    );
  }
  return { identity, description: ENCRYPTION_KEY_ENV };
}

/** The identity file's text, in `age-keygen` format. */
async function identityFileText(identity: string, now: Date): Promise<string> {
  return `# created: ${now.toISOString()}\n` +
    `# public key: ${await identityToRecipient(identity)}\n${identity}\n`;
}

/**
 * Creates the identity file exclusively (a temporary file hard-linked into place, so two gwcli
 * processes never overwrite each other's key); returns the identity that won.
 */
async function createIdentityFile(path: string): Promise<string> {
  await ensureDir(parentOf(path));
  const identity = await generateX25519Identity();
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  await writeFileAtomic(tmp, await identityFileText(identity, new Date()), FILE_MODE);
  try {
    await Deno.link(tmp, path);
    return identity;
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    const existing = findSecretKey((await readTextIfExists(path)) ?? "");
    if (!existing) throw new CliError(`${path} holds no AGE-SECRET-KEY-1 line`);
    return existing;
  } finally {
    await removeIfExists(tmp);
  }
}

/** Options of {@link openAgeFile}. */
export interface AgeFileOptions {
  /** The encrypted file. */
  file: string;
  /** The identity file used when `GWCLI_ENCRYPTION_KEY` is not set. */
  identityFile: string;
  env: Env;
  /** Called with a warning (e.g. an identity file others can read). */
  warn?: (text: string) => void;
}

/** The age-encrypted file as a secret backend. */
export function openAgeFile(options: AgeFileOptions): SecretBackend {
  const { file, identityFile, env } = options;

  const loadIdentity = async (create: boolean): Promise<IdentitySource | undefined> => {
    const fromEnv = identityFromEnv(env);
    if (fromEnv) return fromEnv;
    const text = await readTextIfExists(identityFile);
    if (text !== undefined) {
      const identity = findSecretKey(text);
      if (!identity) throw new CliError(`${identityFile} holds no AGE-SECRET-KEY-1 line`);
      if (await isGroupOrWorldAccessible(identityFile)) {
        options.warn?.(`${identityFile} is readable by other users: run chmod 600 ${identityFile}`);
      }
      return { identity, description: identityFile };
    }
    if (!create) return undefined;
    return { identity: await createIdentityFile(identityFile), description: identityFile };
  };

  return {
    kind: "file",
    description: `age-encrypted file ${file}`,
    async read() {
      let bytes: Uint8Array;
      try {
        bytes = await Deno.readFile(file);
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return null;
        throw err;
      }
      const source = await loadIdentity(false);
      if (!source) {
        throw new CliError(
          `cannot decrypt ${file}: its identity ${identityFile} is missing ` +
            `(and ${ENCRYPTION_KEY_ENV} is not set)`,
          { exitCode: EXIT.auth, hint: "Run `gwcli logout`, then `gwcli login`." },
        );
      }
      const decrypter = new Decrypter();
      decrypter.addIdentity(source.identity);
      try {
        return new TextDecoder().decode(await decrypter.decrypt(bytes));
      } catch (err) {
        throw new CliError(
          `cannot decrypt ${file} with the identity from ${source.description}: ` +
            (err as Error).message,
          { exitCode: EXIT.auth, hint: "Run `gwcli logout`, then `gwcli login`." },
        );
      }
    },
    async write(value) {
      const source = (await loadIdentity(true))!;
      const encrypter = new Encrypter();
      encrypter.addRecipient(await identityToRecipient(source.identity));
      await writeFileAtomic(file, await encrypter.encrypt(value), FILE_MODE);
    },
    async remove() {
      return await removeIfExists(file);
    },
  };
}

/** True when the encrypted file exists. */
export function ageFileExists(file: string): Promise<boolean> {
  return exists(file);
}
