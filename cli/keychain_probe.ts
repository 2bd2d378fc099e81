/**
 * Checks from a second process that the OS keychain keeps what this process wrote.
 *
 * A platform store can accept a write and give it back to the writing process while no later
 * process can read it (a per-session kernel keyring, a Secret Service that lives only as long as
 * one D-Bus session). `gwcli login` would then report a stored token that the next `gwcli`
 * command cannot find. So after a keychain write, gwcli starts itself once more with the hidden
 * argument {@link PROBE_ARGUMENT}; that child reads the entry and prints only the SHA-256 digest
 * of what it found (never the secret), which the writer compares with the digest of what it wrote.
 */

/** The hidden first argument that makes `cli/main.ts` run {@link runKeychainProbe}. */
export const PROBE_ARGUMENT = "__keychain-probe";

/** How long the child may take (loading the native module, a D-Bus round trip). */
const PROBE_TIMEOUT_MS = 15_000;

/** Hex SHA-256 of a string. */
export async function digestOf(value: string): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The command line that runs this gwcli again (a compiled binary, or `deno run` of main.ts). */
export function selfCommand(args: string[]): { command: string; args: string[] } {
  if (Deno.build.standalone) return { command: Deno.execPath(), args };
  const main = new URL("./main.ts", import.meta.url);
  const config = new URL("../deno.json", import.meta.url);
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      "--allow-env",
      "--allow-read",
      "--allow-ffi",
      "--allow-sys",
      `--config=${config.pathname}`,
      main.pathname,
      ...args,
    ],
  };
}

/**
 * Reads the entry `service`/`account` in a new process; resolves with the digest it saw, or
 * with an Error saying why the child could not read it.
 */
export async function readDigestInAnotherProcess(
  service: string,
  account: string,
): Promise<string | null | Error> {
  const { command, args } = selfCommand([PROBE_ARGUMENT, service, account]);
  try {
    const child = new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    }).spawn();
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout).trim();
    if (out.code !== 0) {
      const stderr = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1) ?? "";
      return new Error(
        `a second gwcli process could not read the keychain (${stderr || out.code})`,
      );
    }
    return stdout === "none" ? null : stdout;
  } catch (err) {
    return new Error(`a second gwcli process could not be started (${(err as Error).message})`);
  }
}

/** Reads the entry `service`/`account` of the keychain: the value, or null when there is none. */
export type KeychainReader = (service: string, account: string) => Promise<string | null>;

/**
 * The child's side: prints the digest of the entry that `read` finds, `none` when empty; exits 1
 * on failure. The caller (`cli/main.ts`) passes the keychain's reader, so this module does not
 * import the keychain that imports it.
 */
export async function runKeychainProbe(args: string[], read: KeychainReader): Promise<number> {
  const [service, account] = args;
  if (!service || !account) return 2;
  try {
    const value = await read(service, account);
    console.log(value === null ? "none" : await digestOf(value));
    return 0;
  } catch (err) {
    console.error((err as Error).message);
    return 1;
  }
}
